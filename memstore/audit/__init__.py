"""What the gate refused and what people said of it: the rejection log (``rejections``:
recorded, read, counted, exported), the hash chain over rejections and verifications
(``chain``), erasure with tombstones (``erasure``), human labels (``labels``), and the
alarms over the gate's verdicts (``drift``, ``error_budget``). It may import
``storage``, ``index`` (an erase leaves the index too), the write hook's verdict types
(``write.hook``, ``write.evidence``) and the base modules; never ``memstore.store``."""
