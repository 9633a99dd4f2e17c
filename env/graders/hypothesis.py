"""Grades a hypothesis against a task's rules: naming the real cause pays, stuffing does not.

    judge_hypothesis("hash_password wraps the digest in str(bytes(...)), adding a b'' prefix", rules)
    # -> score 1.0: names the location and the mechanism, claims nothing wrong

Score = 0.5 x (names the faulty location) + 0.5 x (names the mechanism), and exactly 0 when any
clause claims a wrong cause or blames only where the failure shows (the red herring). A clause
that denies a cause ("authenticate_user is fine", "not a race") claims nothing. Listing every
plausible cause therefore scores 0, no more than a wrong hypothesis.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from env.tasks.spec import HypothesisRules

_CLAUSES = re.compile(r"[.;!?\n]+|,\s*(?:or|and)\b|\b(?:but|or|however|alternatively|maybe|perhaps|also)\b", re.I)
_DENIAL = re.compile(
    r"\b(?:not|no|never|isn't|aren't|wasn't|doesn't|don't|correct|fine|innocent|red herring|works|"
    r"working|only (?:a |the )?symptom|just (?:a |the )?symptom|surfaces?|shows? up|appears?|reports?|propagat\w*|downstream)\b",
    re.I,
)
_BLAME = re.compile(r"\b(?:bug|buggy|wrong|incorrect|broken|fault\w*|culprit|cause[sd]?|problem|issue|error|defect|fix)\b", re.I)


class HypothesisJudgement(BaseModel):
    score: float
    names_location: bool
    names_mechanism: bool
    wrong_claim: bool
    follows_red_herring: bool


def _any(patterns: list[str], text: str) -> bool:
    return any(re.search(p, text, re.I) for p in patterns)


def judge_hypothesis(text: str | None, rules: HypothesisRules) -> HypothesisJudgement:
    text = (text or "").strip()
    clauses = [c.strip() for c in _CLAUSES.split(text) if c and c.strip()]
    location = _any(rules.location, text)
    mechanism = _any(rules.mechanism, text)
    wrong = False
    symptom_blame = False
    for clause in clauses:
        if _DENIAL.search(clause):
            continue
        if _any(rules.wrong, clause):
            wrong = True
        if _any(rules.symptom, clause) and not _any(rules.location, clause) and _BLAME.search(clause):
            symptom_blame = True
    mentions_symptom = _any(rules.symptom, text)
    follows_red_herring = symptom_blame or (mentions_symptom and not location)
    score = 0.0 if (wrong or symptom_blame) else 0.5 * location + 0.5 * mechanism
    return HypothesisJudgement(
        score=score,
        names_location=location,
        names_mechanism=mechanism,
        wrong_claim=wrong,
        follows_red_herring=follows_red_herring,
    )
