"""Small stores of facts that change, each with questions about now, before or first.

The phrasings the currency rounds' rules were written from and checked on
(`bench/data/fresh_stores.json`, written by hand: employers, partners, homes,
doctors, hobbies, providers, chains of three values, look-alikes about other
people). They are a development set, not a held-out one: the figures say
whether a round's principle holds across phrasings, not how kenning does on
phrasings it has never seen (`kenning bench currency --split holdout` does
that). The sets `twentysecond-a`, `-b` and `-c` were written by writers who
saw neither the code nor the other sets, in three styles (everyday attributes
beyond home and work; casual chat in lower case; long messages of a busy
parent); `-c` was read once, before any rule was written from it, as a check
on phrasings the rules had not seen. So were `twentyfifth-a`, `-b` and `-c`
(texting-style updates that do not repeat the attribute's word; long messages
with updates told through events and reasons; a mix, with family and friends
named by relation and name); `-c` was read once, after the round's rules. And
`twentysixth-a` and `-b` (a professional's terse notes; a retired person's
polite, rambling sentences to a voice assistant); `-b` was read once, after
the round's rules. And `twentyseventh-a` (a mother whose messages mix what
her family did with her own changes), read once after the twenty-seventh
round's rules, and `twentyeighth-a` (a father writing in his second
language, with questions about his wife and children by name), read once
after the twenty-eighth round's rules. And `twentyninth-a` (a nurse's tired
chat after shifts, all in lower case, her housemates', sister's and dad's
news beside her own), read once before the twenty-ninth round's rules. And
`thirtieth-a` (a new user's plain one-sentence statements, capitalised, over
46 kinds of attribute with regional brands and people, "I ported my number to
Fonic", "Signed the lease on a flat in Graz"), read once before the thirtieth
round's rules. And `thirtyfirst-a` (a freelance designer in Melbourne: two facts
in one message, late looks back at an old value, corrections of a slip, "quit"
then the new value, other people's news said last), read once before the
thirty-first round's rules. And `thirtysecond-a` (a bakery-cafe owner's quick
messages from her phone: the old value dropped and the new one only implied, changes
told through invoices and deliveries, several changes in one message, requests to
the assistant, plans called off, changes back, and questions about the cafe's
things that name no one), read once before the thirty-second round's rules. And
`thirtythird-a` (a widowed lobsterman's lower-case chat: diary lines without
pronouns, friends and family told of by name, ends of old values said after the
new one, questions in lower case), read once before the thirty-third round's rules.

Each store is a fresh SQLite memory with the rules reconciling on write: its
set's background facts ("I bank with ING.", ...) said on 2022-01-10, the
store's own statements at their dates, then each question asked at
2024-12-01. A question counts as right when its expected words are in the
first hit. Through ``write`` each statement is one memory; through ``ingest``
it is one user turn of "Kim" (its facts drawn and reconciled).

    python bench/fresh_stores.py [--via write|ingest|both] [--set NAME] [--failures] [--data PATH]

Prints JSON: per set and door, right / asked, and with ``--failures`` the
questions whose first hit missed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kenning import Memory, Settings
from kenning.clock import FixedClock
from kenning.config import Lifecycle

DATA = Path(__file__).parent / "data" / "fresh_stores.json"
BACKGROUND_AT = "2022-01-10"
ASKED_AT = datetime(2024, 12, 1, tzinfo=UTC)


def run_store(store: dict[str, Any], background: list[str], via: str) -> list[dict[str, Any]]:
    """Each question of ``store`` with its first hit and whether it was right."""
    settings = Settings(lifecycle=Lifecycle(reconcile="rules", reinforce_on_recall=False))
    clock = FixedClock(datetime(2022, 1, 1, tzinfo=UTC))
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(str(Path(tmp) / "m.db"), settings=settings, clock=clock)
        try:
            dropped = set(store.get("drop", []))
            said = [(BACKGROUND_AT, t) for t in background if t not in dropped]
            said += [(d, t) for d, t in store["said"]]
            for n, (day, text) in enumerate(sorted(said)):
                at = datetime.fromisoformat(day).replace(tzinfo=UTC) + timedelta(minutes=n)
                clock.set(at)
                if via == "write":
                    mem.write([{"content": text, "event_at": at}])
                else:
                    turn = {"role": "user", "name": "Kim", "content": text, "at": at}
                    mem.ingest([turn], f"s{n}")
            clock.set(ASKED_AT)
            out = []
            for question, want in store["questions"]:
                hits = mem.recall(question, 5).hits
                first = hits[0].memory.content if hits else ""
                out.append(
                    {
                        "question": question,
                        "want": want,
                        "first": first,
                        "right": want.lower() in first.lower(),
                    }
                )
            return out
        finally:
            mem.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--via", choices=["write", "ingest", "both"], default="both")
    ap.add_argument("--set", dest="name", help="only the set of this name")
    ap.add_argument("--failures", action="store_true", help="list the questions missed")
    ap.add_argument("--data", type=Path, default=DATA, help="a file of sets (default: %(default)s)")
    a = ap.parse_args()
    data = json.loads(a.data.read_text())
    doors = ["write", "ingest"] if a.via == "both" else [a.via]
    result: dict[str, Any] = {}
    for st in data["sets"]:
        if a.name and st["name"] != a.name:
            continue
        for via in doors:
            answers = [q for store in st["stores"] for q in run_store(store, st["background"], via)]
            right = sum(q["right"] for q in answers)
            entry: dict[str, Any] = {
                "right": right,
                "asked": len(answers),
                "share": round(right / len(answers), 3),
            }
            if a.failures:
                entry["failures"] = [q for q in answers if not q["right"]]
            result[f"{st['name']}/{via}"] = entry
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
