"""Write ``language/data/antonyms.tsv``: opposite words from WordNet 3.0, one pair a line.

Each line: a part of speech ("a" adjective, "v" verb), a word, its opposite.

The gate's polarity check reads the table (``language.antonyms``); nothing at run time
needs WordNet or nltk. To make the table again (the same lines come out):

    apt-get download wordnet-base && dpkg -x wordnet-base_*.deb /tmp/wordnet
    python -m venv /tmp/nltk && /tmp/nltk/bin/pip install nltk==3.9.2
    /tmp/nltk/bin/python tools/wordnet_antonyms.py /tmp/wordnet/usr/share/wordnet

What it keeps (single words only; a multi-word lemma is never one token of a claim):
- adjectives: each head synset's words against the words of the synsets WordNet names
  as its antonyms ("difficult, hard" / "easy");
- verbs: WordNet's own word-to-word antonyms ("pass" / "fail"), not their synsets'
  other words (a verb synset holds words of other senses: "pass" is in "die"'s);
- never a light verb (``LIGHT``), whose senses are too many to oppose.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "language" / "data" / "antonyms.tsv"
#: Verbs with too many senses for one opposite ("go", "come", "give", "take").
LIGHT = frozenset("be have do go come get give take make keep let put set stay".split())
#: WordNet's lexicographer files, as nltk's reader wants them listed (it reads only their
#: count here; Debian's wordnet-base does not ship the file).
LEXNAMES = 45


def _reader(wordnet: Path, root: Path):  # -> nltk's WordNetCorpusReader
    """nltk's reader of ``wordnet`` through links in ``root`` (with a ``lexnames``)."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class Reader(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:  # no other WordNet to map from
            return None

    for part in wordnet.iterdir():
        (root / part.name).symlink_to(part.resolve())
    if not (root / "lexnames").exists():
        lines = (f"{i:02d} lex{i:02d} 0" for i in range(LEXNAMES))
        (root / "lexnames").write_text("\n".join(lines) + "\n")
    reader = Reader(str(root), None)
    if reader.get_version() != "3.0":
        sys.exit(f"{wordnet} is WordNet {reader.get_version()}, not 3.0")
    return reader


def _word(name: str) -> str | None:
    return name.lower() if name.isalpha() else None


def pairs(wn) -> set[tuple[str, str, str]]:  # wn: nltk's WordNetCorpusReader
    """Each opposite pair with its part of speech ("a" or "v"), both ways round."""
    found: set[tuple[str, str, str]] = set()

    def add(pos: str, a: str | None, b: str | None) -> None:
        if a and b and a != b and a not in LIGHT and b not in LIGHT:
            found.update({(pos, a, b), (pos, b, a)})

    for synset in wn.all_synsets("a"):
        for opposite in {a.synset() for lemma in synset.lemmas() for a in lemma.antonyms()}:
            for one in synset.lemmas():
                for other in opposite.lemmas():
                    add("a", _word(one.name()), _word(other.name()))
    for synset in wn.all_synsets("v"):
        for lemma in synset.lemmas():
            for opposite in lemma.antonyms():
                add("v", _word(lemma.name()), _word(opposite.name()))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wordnet", type=Path, help="WordNet 3.0's dict folder (data.adj, ...)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="wordnet-") as root:
        found = sorted(pairs(_reader(args.wordnet, Path(root))))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(f"{pos}\t{a}\t{b}\n" for pos, a, b in found))
    print(f"{len(found) // 2} pairs -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
