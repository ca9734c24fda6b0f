"""Explanations for people and programs: proofs and decisions as text, JSON, DOT.

    print(to_text(why(model, "current", ("c1",)), program=program))
    annotate = annotator(store, decision.revision)
    print(explain_text(decision, annotate, program))
    decision_json(decision, annotate, program)

proof.py is the one renderer of proofs and why-not answers (typed by the
checked program); decision.py renders gate decisions with it; annotate.py
says, for each fact leaf, which store event wrote it.
"""

from .annotate import annotator, model_annotator
from .decision import decision_json, explain_text, reason_title
from .logged import (
    Rebuilt,
    action_text,
    ask_codes,
    logged_asked,
    outcome_word,
    rebuild,
    rebuilt_dot,
    rebuilt_json,
    rebuilt_text,
)
from .unblock import Change, unblock
from .proof import MAX_INDENT, MAX_JSON_DEPTH, Annotate, Renderer, graph_to_dot, text_lines, to_dot, to_json, to_text

__all__ = [
    "Annotate",
    "Change",
    "MAX_INDENT",
    "MAX_JSON_DEPTH",
    "Rebuilt",
    "Renderer",
    "ask_codes",
    "outcome_word",
    "logged_asked",
    "rebuild",
    "rebuilt_dot",
    "rebuilt_json",
    "rebuilt_text",
    "action_text",
    "annotator",
    "model_annotator",
    "decision_json",
    "explain_text",
    "graph_to_dot",
    "reason_title",
    "text_lines",
    "to_dot",
    "to_json",
    "to_text",
    "unblock",
]
