"""language: the reading shared by the gate's checks and the conversation extractor.

Pure text in, spans and words out: no storage, no models of the gate. Sentences
(``language.sentences``) come from pysbd, a rule-based sentence boundary detector
(MIT), inside blocks of lines; clauses (``language.clauses``) split compound
sentences; speakers (``language.speakers``) rewrite first person to the person who said
it; fields (``language.fields``) read JSON and ``key: value`` records; values
(``language.values``) normalise numbers (text2num, MIT), dates, times and rates;
corrections (``language.corrections``) find "X, not Y" and rewrite the older statement;
parsing (``language.parsing``) gives verbs, lemmas, names, roles and what each "not" denies,
from spaCy's small English model (MIT, loaded on first use).
"""

from language.sentences import sentence_spans, sentences
from language.speakers import resolve_first_person, third_person

__all__ = ["resolve_first_person", "sentence_spans", "sentences", "third_person"]
