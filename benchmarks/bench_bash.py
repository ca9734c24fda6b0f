"""tree-sitter-bash against bashlex: which reads an agent's shell commands.

    python benchmarks/bench_bash.py [--repeat N]

Robustness: how many commands of a corpus of tricky but valid bash (the
issue's force-push forms, heredocs, `[[ ]]`, `case`, arithmetic, arrays,
process substitution, ...) each parser accepts. Speed: the median time to
parse one corpus command, and the time for the hostile inputs the hook must
stay fast on (`"env " * 1500`, a 160 KB word, 20 000 `;`-joined commands),
and for the whole reading (ordinance.hosts.bash.read) on them.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

CORPUS = [
    "git push -f origin main",
    "cd sub && git push --force-w origin HEAD",
    "git push origin main>x",
    "env -S 'git push -f origin main'",
    "stdbuf -oL git push --mirror",
    "setsid git push origin +main",
    "find . -name x -exec git push -f origin main \\;",
    "script -qc 'git push -f origin @' /dev/null",
    "b=-f; git push $b origin main",
    "git push $(echo -f) origin main",
    "echo 'git push -f origin main' | sh",
    "python3 -c 'import os; os.system(\"git push -f\")'",
    "cat <<'EOF' | sh\ngit push -f origin main\nEOF\n",
    "git commit -F- <<EOF\nnever force push main\nEOF\n",
    "[[ -f x ]] && rm x",
    "case $1 in a) ls;; *) pwd;; esac",
    "echo $((1 + 2)) > out",
    "for ((i = 0; i < 3; i++)); do echo $i; done",
    "arr=(a b c); echo ${arr[1]}",
    "diff <(ls a) <(ls b)",
    "coproc ls",
    "select x in a b; do echo $x; break; done",
    'f() { git push -f "$@"; }; f origin main',
    "echo $'a\\nb' > f",
    "x=${y:-default} ls",
    "time (cd /tmp && ls)",
    'if [ -n "$X" ]; then echo y; else echo n; fi',
    "tee -a ../outside/x < in",
    "dd if=/dev/zero of=../x bs=1 count=1",
    "sed -i.bak 's/a/b/' f.txt",
]
HOSTILE = {
    '"env " * 1500': "env " * 1500,
    "a 160 KB word": "echo " + "a" * 160_000,
    "20 000 commands": "a;" * 20_000,
}


def tree_sitter_parse() -> Callable[[str], bool]:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    parser = Parser(Language(tree_sitter_bash.language()))
    return lambda text: not parser.parse(text.encode()).root_node.has_error


def bashlex_parse() -> Callable[[str], bool]:
    import bashlex

    def parse(text: str) -> bool:
        try:
            bashlex.parse(text)
            return True
        except Exception:  # bashlex raises its own errors and NotImplementedError
            return False

    return parse


def timed(f: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from ordinance.hosts.bash import read

    peers = {"tree-sitter-bash": tree_sitter_parse(), "bashlex": bashlex_parse()}
    print(f"{'parser':<18}{'accepted':>10}{'median/cmd':>14}" + "".join(f"{k:>20}" for k in HOSTILE))
    for name, parse in peers.items():
        accepted = sum(parse(c) for c in CORPUS)
        per = statistics.median(timed(lambda c=c: parse(c), args.repeat) for c in CORPUS)
        hostile = [timed(lambda t=t: parse(t), max(1, args.repeat // 2)) for t in HOSTILE.values()]
        print(
            f"{name:<18}{accepted:>5}/{len(CORPUS):<4}{per * 1e6:>11.0f} us"
            + "".join(f"{h * 1e3:>17.1f} ms" for h in hostile)
        )
        if name == "bashlex":
            print("  rejected:", "; ".join(repr(c)[:40] for c in CORPUS if not parse(c)))
    per = statistics.median(timed(lambda c=c: read(c, "/tmp"), args.repeat) for c in CORPUS)
    hostile = [timed(lambda t=t: read(t, "/tmp"), max(1, args.repeat // 2)) for t in HOSTILE.values()]
    print(f"{'hosts.bash.read':<18}{'':>10}{per * 1e6:>11.0f} us" + "".join(f"{h * 1e3:>17.1f} ms" for h in hostile))


if __name__ == "__main__":
    main()
