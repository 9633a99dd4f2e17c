"""Grades a hypothesis against a task's rules: one claim naming the real cause pays; stuffing,
hedging and blaming the red herring do not.

    judge_hypothesis("hash_password wraps the digest in str(bytes(...)), adding a b'' prefix", rules)
    # -> score 1.0: names the location and the mechanism, claims nothing wrong
    judge_hypothesis("", rules, suspect="auth.py:7", mechanism="wrong_representation", gold=claim)
    # -> score 1.0 from the structured fields alone

The text is read as one claim:

    ====================  ==============================================================
    denial                "X is fine|correct|innocent|not the bug|a red herring|only the
                          symptom|where it shows", "X works", "not/never a|an|the X",
                          "no X", "not in X", "neither/nor X": only X (at most 3 words) is
                          removed; the rest of the clause still counts, and a denied term
                          earns no credit
    where it shows        "the failure surfaces/shows up/appears in X": X is removed, a
                          mention, not blame
    wrong claim           a ``rules.wrong`` pattern in what is left       -> score 0
    red-herring blame     a blame word (bug, wrong, broken, fix, ...) about a
                          ``rules.symptom`` term: the only place named in its phrase, or
                          the nearest one (ties blame); on the effect side of a
                          causal chain ("... makes X fail", "X fails because ...") only
                          bug/culprit/fault/fix count; a suspect field naming a symptom
                          that is not the gold location also counts    -> score 0
    hedging               or, either, maybe, perhaps, possibly, might, could be, not
                          sure, no idea, "one of these", somewhere, probably, ..., "?", word/word
                          alternatives, and lists of causes (enumerations, "several
                          causes", "another bug", etc., or a bare list of three or more
                          short keyword fragments)                    -> score 0
    otherwise             0.5 x names the location + 0.5 x names the mechanism
    ====================  ==============================================================

Structured fields replace the text's location and mechanism: ``suspect`` (a function name, or
``file:line`` within 2 lines of a line the gold patch changes) and ``mechanism`` (a value of
``env.graders.mechanisms.MECHANISMS``, validated by the episode); the text is still checked for
wrong claims, blame and hedging. Any zeroing rule makes the score 0, the score of a wrong
hypothesis, so stuffing every plausible cause in, hedged or listed, never pays.
"""

from __future__ import annotations

import bisect
import posixpath
import re

from pydantic import BaseModel, Field

from env.patches import Location


class ClaimPhrases(BaseModel):
    """Plain phrases of a task's vocabulary, for the property tests: every location with every mechanism must read
    as the right claim; any of them with a wrong cause, or with another task's vocabulary, as a wrong one."""

    location: list[str] = Field(default_factory=list, description="Ways to name the gold location")
    mechanism: list[str] = Field(default_factory=list, description="Ways to name the gold mechanism")
    wrong: list[str] = Field(default_factory=list, description="Plausible causes that are not this bug")


class HypothesisRules(BaseModel):
    """Regular expressions (case-insensitive) that grade a hypothesis; a classic task's task.json holds them.

    ``wrong`` lists the plausible wrong causes of this bug and the other classic tasks' locations and mechanisms
    (a text that names one claims a cause this bug does not have)."""

    location: list[str]
    mechanism: list[str]
    symptom: list[str] = Field(default_factory=list, description="Where the failure shows, not where it comes from")
    wrong: list[str] = Field(default_factory=list, description="Causes that are not this bug")
    phrases: ClaimPhrases = Field(default_factory=ClaimPhrases)


class GoldClaim(BaseModel):
    """What the gold fix changes and repairs, for scoring structured fields."""

    locations: list[Location]
    mechanisms: list[str]


class HypothesisJudgement(BaseModel):
    score: float
    names_location: bool
    names_mechanism: bool
    wrong_claim: bool
    follows_red_herring: bool
    hedged: bool = False
    structured: bool = False
    suspect_ok: bool | None = None
    mechanism_ok: bool | None = None


# -- suspect field ----------------------------------------------------------------------------

_LINE_SLACK = 2


def _path_parts(path: str) -> list[str]:
    norm = posixpath.normpath(path.strip().replace("\\", "/"))
    return [p for p in norm.split("/") if p not in ("", ".")]


def _same_file(a: str, b: str) -> bool:
    pa, pb = _path_parts(a), _path_parts(b)
    if not pa or not pb:
        return False
    short, long = (pa, pb) if len(pa) <= len(pb) else (pb, pa)
    return long[-len(short) :] == short


def _same_function(a: str, b: str) -> bool:
    # Dotted suffixes: "add" ~ "Cart.add" ~ "cart.Cart.add", but not "Other.add" ~ "Cart.add".
    pa, pb = a.split("."), b.split(".")
    if "" in pa or "" in pb:
        return False
    short, long = (pa, pb) if len(pa) <= len(pb) else (pb, pa)
    return long[-len(short) :] == short


def suspect_matches(suspect: str, gold: list[Location]) -> bool:
    """Whether a ``suspect`` field (``name``, ``module.name``, ``file.py::Class.method`` or
    ``file:line``) points at one of the gold fix's locations."""
    value = (suspect or "").strip().strip("`'\"").strip()
    if value.endswith("()"):
        value = value[:-2].strip()
    if not value or not gold:
        return False
    head, sep, tail = value.rpartition(":")
    if sep and head and re.fullmatch(r"\s*\d+\s*", tail):
        line, path = int(tail), head.rstrip(":").strip()
        return any(_same_file(path, g.file) and g.start - _LINE_SLACK <= line <= g.end + _LINE_SLACK for g in gold)
    name = value.rpartition("::")[2] if "::" in value else value
    name = name.rpartition(":")[2].strip()
    if not name:
        return False
    return any(g.function and _same_function(name, g.function) for g in gold)


# -- vocabulary -------------------------------------------------------------------------------

_HOLE = " \u00a6 "  # what a removed span becomes: a mark no word of any rule matches

_STOP = (
    r"(?:and|or|but|so|because|since|while(?!\s+loop)|whereas|although|though|however|yet|nor|then|"
    r"which|that|when|whenever|where|if|also|plus|thus|therefore|hence|is|are|was|were)"
)
# A token starts only where none continues, so a long run of code characters is scanned once, not
# once per character (which made the span patterns quadratic).
_TOKEN = r"(?<![\w`'\"\[\]().:\-])[\w`'\"\[\]()\-]+(?:(?:\.|::)[\w`'\"\[\]()\-]+)*"
_WORD = rf"(?!{_STOP}\b){_TOKEN}"
_ARTICLE = r"(?:(?:the|a|an|this|its|their|our|my)\s+)"
_SUBJECT = rf"{_ARTICLE}?(?:{_WORD}\s+)?{_WORD}"  # the thing denied before "is fine": at most 2 words
_OBJECT = rf"{_WORD}(?:\s+{_WORD}){{0,2}}"  # the thing denied after "not a": at most 3 words
# Only a clause's whole subject is denied: "there is a race authenticate_user is fine" denies nothing.
_BOUNDARY = (
    r"(?P<pre>^|[,;:.!?\n(]|\b(?:and|but|so|because|since|while|whereas|although|though|however|yet|also|then|that|think|believe)\b)"
)
_FINE = (
    r"(?:fine|correct|ok|okay|innocent|working|blameless|not\s+(?:the|a)\s+(?:bug|cause|problem|culprit|issue|fault)|"
    r"not\s+at\s+fault|not\s+buggy|not\s+broken|a\s+red\s+herring|(?:only|just|merely)\s+(?:the|a)\s+symptom|"
    r"where\s+(?:it|the\s+\w+)\s+(?:shows(?:\s+up)?|surfaces|appears))"
)
_SUBJECT_DENIALS = [
    re.compile(
        rf"{_BOUNDARY}\s*(?P<span>{_SUBJECT}\s+(?:is|are|was|were)\s+(?:(?:actually|itself|themselves|perfectly|also)\s+)?{_FINE})\b",
        re.I,
    ),
    re.compile(rf"{_BOUNDARY}\s*(?P<span>{_SUBJECT}\s+works?(?:\s+(?:fine|correctly|as\s+(?:intended|expected)))?)\b", re.I),
    re.compile(
        rf"{_BOUNDARY}\s*(?P<span>{_SUBJECT}\s+(?:only|just|merely)\s+(?:shows|reports|surfaces|exposes|reveals)\s+"
        r"(?:it|the\s+(?:symptom|failure|error|mismatch|bug|problem)))\b",
        re.I,
    ),
]
_SURFACES = re.compile(
    r"\b(?:surfaces?|surfaced|shows?(?:\s+up)?|showed(?:\s+up)?|appears?|appeared|manifests?|manifested|propagates?|"
    r"propagated|bubbles?\s+up|is\s+(?:seen|observed|visible|reported|noticed|detected|caught))\s+(?:only\s+)?"
    rf"(?:in|at|from|through|via|to|inside|within)\s+{_ARTICLE}?{_WORD}(?:\s+{_WORD})?",
    re.I,
)
_IDENT = r"[`\w]*(?:_|\(|`|\.\w)"  # a code name, so "not authenticate_user" denies it but "not atomic" does not
_NEGATION = re.compile(
    rf"(?:\b(?:not|never)|n't)\s+(?:(?:a|an|the|any)\s+|(?:in|inside|within)\s+(?:the\s+)?)(?P<a>{_OBJECT})"
    rf"|(?:\bnot|n't)\s+(?={_IDENT})(?P<b>{_OBJECT})"
    rf"|\bno\s+(?!longer\b|more\b|matter\b|one\b|doubt\b)(?P<c>{_OBJECT})"
    rf"|\b(?:neither|nor)\s+(?:(?:a|an|the)\s+)?(?P<d>{_OBJECT})",
    re.I,
)
# "there is no lock" claims an absence (a cause), unlike "no race" or "has no bug".
_ABSENCE = re.compile(r"\b(?:there\s+is|there's|there\s+are|there\s+was|has|have|had|uses?|holds?|takes?|with|acquires?)\s*$", re.I)
_BLAME_NOUN = re.compile(r"^(?:bugs?|problems?|issues?|faults?|defects?|errors?|mistakes?|flaws?)\b", re.I)
_BLAME_NOUN_IN = re.compile(r"\b(?:bugs?|problems?|issues?|faults?|defects?|errors?|mistakes?|flaws?|culprits?|causes?)\b", re.I)

_HEDGE = re.compile(
    r"\?|\b(?:or|either|maybe|perhaps|possibly|might|could\s+be|not\s+sure|unsure|no\s+idea|(?:do\s+not|don't|dont)\s+know|"
    r"unclear|one\s+of(?=\s*:)|one\s+of\s+(?:these|those|them|the\s+following|the\s+above|several|many|two|three)|somewhere|probably|uncertain|not\s+certain|none\s+of\s+(?:these|those|them|the\s+above)|"
    r"alternatively|presumably|conceivably|i\s+guess|hard\s+to\s+say|can't\s+tell|cannot\s+tell)\b",
    re.I,
)
# "race/lock", "and/or"; a path ("src/auth.py", "a/b/c") is one thing, not alternatives.
_SLASH = re.compile(r"(?<![\w./:])[A-Za-z_]\w*/[A-Za-z_]\w*(?![\w./:])")
_ENUMERATION = re.compile(r"(?m)^\s*(?:[-*\u2022]|\d+[.)]|\(?[a-z]\))\s+\S")
_FIRST_ITEM = re.compile(r"(?:^|\s)\(?(?:1|a|i)\)\s", re.I)  # "1) ... 2) ...", "(a) ... (b) ..."
_SECOND_ITEM = re.compile(r"\s\(?(?:2|b|ii)\)\s", re.I)
_SEVERAL = re.compile(
    r"\b(?:(?:two|three|four|several|multiple|many|various|a\s+few|some|a\s+couple\s+of|a\s+number\s+of)\s+(?:\w+\s+)?"
    r"(?:causes|bugs|issues|problems|reasons|culprits|suspects|candidates|possibilities|explanations|defects|faults|hypotheses)|"
    r"another\s+(?:possible\s+|potential\s+)?(?:bug|cause|culprit|issue|problem|possibility|explanation|suspect|candidate|defect)|"
    r"etc|and\s+so\s+on|among\s+others)\b",
    re.I,
)

_BLAME = re.compile(
    r"\b(?:bug|bugs|buggy|culprit|fault|faulty|faults|defect|defective|fix|fixes|fixed|fixing|root\s+cause|responsible|blame|"
    r"wrong|wrongly|incorrect|incorrectly|broken|cause|problem|problems|problematic|issue|issues|error|errors|erroneous|"
    r"erroneously|mistake|mistaken|mistakenly|flaw|flawed|misbehav\w*|mis(?:compar|handl|comput)\w*)\b",
    re.I,
)
# On the effect side of a causal chain a symptom may be "wrong" or "broken"; only these still blame it.
_STRONG_BLAME = re.compile(
    r"\b(?:bug|bugs|buggy|culprit|fault|faulty|defect|defective|fix|fixes|fixing|root\s+cause|responsible|blame)\b", re.I
)

_SENTENCES = re.compile(r"[;!?\n]+|\.(?=\s|$)")
# Wrong patterns are read per clause, as before: "the peak is tracked, but the bug is a race" is no peak bug.
_CLAUSES = re.compile(r"[;!?\n]+|\.(?=\s|$)|\b(?:but|however|whereas|although|though)\b", re.I)
# Cause -> effect: what follows is the effect. Effect <- cause: what precedes is the effect.
_FORWARD = (
    r"so\s+that|so|therefore|thus|hence|consequently|as\s+a\s+result|which\s+is\s+why|that\s+is\s+why|that's\s+why|"
    r"makes?|made|making|causes|caused(?!\s+by)|causing|leads?\s+to|led\s+to|leading\s+to|results?\s+in|resulting\s+in|"
    r"breaks?|breaking|then|means|meaning"
)
_BACKWARD = (
    r"because(?:\s+of)?|since|due\s+to|(?:is\s+|are\s+)?caused\s+by|stems?\s+from|comes?\s+from|results?\s+from|"
    r"resulting\s+from|originates?\s+(?:in|from)|owing\s+to|thanks\s+to|when|whenever"
)
_CAUSAL = re.compile(rf"\b(?:(?P<f>{_FORWARD})|(?P<b>{_BACKWARD}))\b", re.I)
_CONJUNCTION = re.compile(r"^(?:and|but|while|whereas|or|also|plus|which|who|[-\u2013\u2014|]+)$", re.I)
_PHRASE_CUT = re.compile(r"[,:|]|\s[-\u2013\u2014]+\s|\b(?:and|but|while(?!\s+loop)|whereas|or|also|plus|which|who)\b", re.I)

_FRAGMENTS = re.compile(r"[,;\n]+|\.(?=\s|$)")


def _spans(patterns: list[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for p in patterns for m in re.finditer(p, text, re.I) if m.end() > m.start()]


def _any(patterns: list[str], text: str) -> bool:
    return any(re.search(p, text, re.I) for p in patterns)


# -- reading the text -------------------------------------------------------------------------


def _remove_denials(text: str) -> str:
    """The text with every denied thing, and every "surfaces in X", replaced by a hole."""
    for pattern in _SUBJECT_DENIALS:
        text = pattern.sub(lambda m: m.group("pre") + _HOLE, text)
    text = _SURFACES.sub(_HOLE, text)

    def negated(m: re.Match[str]) -> str:
        group = next(g for g in "abcd" if m.group(g) is not None)
        before = text[max(0, m.start() - 40) : m.start()]
        if group == "c" and _ABSENCE.search(before) and not _BLAME_NOUN.match(m.group("c")):
            return m.group(0)
        # "no bug race" denies the bug, not the race: a denied noun phrase ends at its head noun.
        head = _BLAME_NOUN_IN.search(m.group(group))
        if head is None:
            return _HOLE
        return _HOLE + m.group(0)[m.start(group) - m.start() + head.end() :]

    return _NEGATION.sub(negated, text)


def _hedged(text: str, kept: str, rules: HypothesisRules) -> bool:
    if _HEDGE.search(text) or _SEVERAL.search(text):
        return True
    # "race/lock" offers alternatives; "increment/decrement", both halves the faulty location, names one place.
    if any(not all(_any(rules.location, side) for side in m.group(0).split("/")) for m in _SLASH.finditer(text)):
        return True
    first = _FIRST_ITEM.search(text)
    if first and _SECOND_ITEM.search(text, first.end() - 1):
        return True
    if len(_ENUMERATION.findall(text)) >= 2:
        return True
    # A bare keyword list ("race, lock, atomic, increment"): many short fragments, each a cause word.
    vocabulary = rules.location + rules.mechanism + rules.wrong + rules.symptom
    fragments = [f.replace("\u00a6", " ").strip() for f in _FRAGMENTS.split(kept)]
    fragments = [f for f in fragments if f]
    short = [f for f in fragments if len(f.split()) <= 3 and (_any(vocabulary, f) or _BLAME.search(f))]
    return len(short) >= 3 and 2 * len(short) >= len(fragments)


def _regions(sentence: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_effect) pieces of a sentence cut at causal connectives."""
    cuts = [(m.start(), m.end(), "f" if m.group("f") else "b") for m in _CAUSAL.finditer(sentence)]
    bounds = [0] + [x for s, e, _ in cuts for x in (s, e)] + [len(sentence)]
    pieces = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
    regions = []
    for i, (start, end) in enumerate(pieces):
        after_forward = i > 0 and cuts[i - 1][2] == "f"
        before_backward = i < len(cuts) and cuts[i][2] == "b"
        regions.append((start, end, after_forward or before_backward))
    return regions


def _blames_symptom(region: str, rules: HypothesisRules, effect: bool) -> bool:
    """Whether some blame word in ``region`` is about a symptom term rather than a location term.

    A blame word binds within its own phrase (cut at commas, colons and conjunctions) first: "X
    compares wrongly, increment" blames X. A phrase naming neither ("The culprit: X") or both
    binds to the nearest term, counted in words stretched across phrase cuts; ties blame.
    """
    symptoms = _spans(rules.symptom, region)
    if not symptoms:
        return False
    places = _spans(rules.location, region)
    tokens = list(re.finditer(r"\S+", region))
    starts = [t.start() for t in tokens]
    pos, at = [], 0
    for i, tok in enumerate(tokens):
        if i:
            at += 1 + (2 if tokens[i - 1].group().endswith((",", ":")) else 0) + (2 if _CONJUNCTION.match(tok.group()) else 0)
        pos.append(at)
    cuts = [0] + [m.end() for m in _PHRASE_CUT.finditer(region)] + [len(region) + 1]

    def index(char: int) -> int:
        return max(bisect.bisect_right(starts, char) - 1, 0)

    def distance(word: int, span: tuple[int, int]) -> int:
        first, last = index(span[0]), index(max(span[1] - 1, span[0]))
        return min(abs(pos[word] - pos[first]), abs(pos[word] - pos[last]))

    for m in (_STRONG_BLAME if effect else _BLAME).finditer(region):
        k = bisect.bisect_right(cuts, m.start()) - 1
        lo, hi = cuts[k], cuts[k + 1]
        near_symptoms = [s for s in symptoms if s[1] > lo and s[0] < hi]
        near_places = [p for p in places if p[1] > lo and p[0] < hi]
        if near_symptoms and not near_places:
            return True
        if near_places and not near_symptoms:
            continue
        if not near_symptoms:
            near_symptoms, near_places = symptoms, places
        word = index(m.start())
        to_symptom = min(distance(word, s) for s in near_symptoms)
        to_location = min((distance(word, p) for p in near_places), default=None)
        if to_location is None or to_symptom <= to_location:
            return True
    return False


def _red_herring_blame(kept: str, rules: HypothesisRules) -> bool:
    for sentence in _SENTENCES.split(kept):
        if not sentence or not sentence.strip():
            continue
        for start, end, effect in _regions(sentence):
            if _blames_symptom(sentence[start:end], rules, effect):
                return True
    return False


def _wrong_claim(kept: str, rules: HypothesisRules) -> bool:
    # Per clause, so a pattern like "peak[^.]*bug" does not join two unrelated claims.
    return any(_any(rules.wrong, s) for s in _CLAUSES.split(kept) if s)


def _suspect_blames_symptom(suspect: str, rules: HypothesisRules) -> bool:
    value = suspect.strip()
    if re.search(r":\s*\d+\s*$", value):
        return False  # a file:line says nothing about the symptom
    name = value.rpartition("::")[2] if "::" in value else value
    return _any(rules.symptom, name)


# -- the judgement ----------------------------------------------------------------------------


def judge_hypothesis(
    text: str | None,
    rules: HypothesisRules,
    suspect: str | None = None,
    mechanism: str | None = None,
    gold: GoldClaim | None = None,
) -> HypothesisJudgement:
    text = (text or "").replace("\u2019", "'").strip()
    kept = _remove_denials(text)
    suspect = suspect.strip() if suspect and suspect.strip() else None
    mechanism = mechanism.strip() if mechanism and mechanism.strip() else None

    suspect_ok = None if suspect is None else gold is not None and suspect_matches(suspect, gold.locations)
    mechanism_ok = None if mechanism is None else gold is not None and mechanism in gold.mechanisms
    location = suspect_ok if suspect_ok is not None else _any(rules.location, kept)
    named_mechanism = mechanism_ok if mechanism_ok is not None else _any(rules.mechanism, kept)

    wrong = _wrong_claim(kept, rules)
    hedged = _hedged(text, kept, rules)
    blame = _red_herring_blame(kept, rules) or (suspect is not None and not suspect_ok and _suspect_blames_symptom(suspect, rules))
    follows_red_herring = blame or (_any(rules.symptom, text) and not location)
    score = 0.0 if (wrong or blame or hedged) else 0.5 * location + 0.5 * named_mechanism
    return HypothesisJudgement(
        score=score,
        names_location=location,
        names_mechanism=named_mechanism,
        wrong_claim=wrong,
        follows_red_herring=follows_red_herring,
        hedged=hedged,
        structured=suspect is not None or mechanism is not None,
        suspect_ok=suspect_ok,
        mechanism_ok=mechanism_ok,
    )
