"""Past agent sessions and decision logs replayed through a policy, read only.

    read = read_calls(["~/.claude/projects/p/"])           # transcripts.py
    subjects = subjects_of_calls(read.calls, to_request, problems)
    for row in audit(Gate(policy, store), subjects):       # replay.py
        summary.add(row)                                   # report.py
    report.add(row); report.html(summary)                  # html.py

`to_request` maps a hook payload to its Request: the host's own mapping
(`claude_code_request`, host.py, from ordinance.hosts).
"""

from .host import claude_code_request
from .html import PROOFS, Report
from .replay import Audited, Subject, Timeline, answer_of, audit, subjects_of_calls, subjects_of_log
from .report import Summary, row_json
from .transcripts import Problem, Read, ToolCall, read_calls, transcript_files

__all__ = [
    "Audited",
    "claude_code_request",
    "PROOFS",
    "Problem",
    "Read",
    "Report",
    "Subject",
    "Summary",
    "Timeline",
    "ToolCall",
    "answer_of",
    "audit",
    "read_calls",
    "row_json",
    "subjects_of_calls",
    "subjects_of_log",
    "transcript_files",
]
