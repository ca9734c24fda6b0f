"""Explanations for people and programs: decisions and proofs as text, JSON, DOT.

    annotate = annotator(store, program)
    print(explain_text(decision, annotate, program))

Each fact leaf of a proof is annotated from the store (the event behind it,
its source, author and validity); render.py holds the decision renderers.
"""

from .render import annotator, decision_graph, explain_dot, explain_json, explain_text

__all__ = ["annotator", "decision_graph", "explain_dot", "explain_json", "explain_text"]
