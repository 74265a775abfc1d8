"""What the gate refused and what people said of it: the rejection log read
(``rejections``: a page, one, counts, exports; the write path records into it with
``write.refusals``), the hash chain over rejections and verifications (``chain``),
erasure with tombstones (``erasure``), human labels (``labels``), and the alarms over the
gate's verdicts (``drift``, ``error_budget``). It may import ``storage``, ``index`` (an
erase leaves the index too) and the base modules; never the write path above it."""
