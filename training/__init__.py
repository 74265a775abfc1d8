"""Training pipelines that live outside the installed packages (issue 23).

``python -m training.verifier``: the resumable, chunked fine-tuning of the MiniLM
cross-encoder verifier on a mix of NLI, agent-memory and grounding pairs.
"""
