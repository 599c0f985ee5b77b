"""Conversation turns to facts: the rules, the LLM path and LoCoMo coverage (lifecycle.facts)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kenning.errors import ConfigError, InvalidInput, LLMError
from kenning.lifecycle.facts import (
    FACT_KINDS,
    SYSTEM_PROMPT,
    Fact,
    LLMFactExtractor,
    RuleFactExtractor,
    Turn,
    extractor_for,
    memory_type_for,
)
from kenning.llm.base import ChatModel, Completion, Message
from kenning.models import MemoryType

AT = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday
LOCOMO = Path("/work/shared/bench/locomo10.json")


def rules(*lines: str | tuple[str, str], at: datetime | None = AT) -> list[Fact]:
    """Run the rules over turns given as "Speaker: text" or (speaker, text)."""
    turns = []
    for i, line in enumerate(lines):
        speaker, text = line if isinstance(line, tuple) else line.split(": ", 1)
        turns.append(Turn(i, speaker, text, at))
    return RuleFactExtractor().extract(turns)


def one(*lines: str) -> Fact:
    facts = rules(*lines)
    assert len(facts) == 1, facts
    return facts[0]


# --------------------------------------------------------------------------- rules


def test_statement_in_third_person() -> None:
    fact = one("Anna: I'm a nurse and I live in Boston.")
    assert fact.content == "Anna is a nurse and Anna lives in Boston."
    assert (fact.kind, fact.memory_type, fact.importance) == ("statement", MemoryType.SEMANTIC, 4)
    assert (fact.evidence, fact.subject, fact.event_at) == ((0,), "Anna", None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I have two kids and I go to the gym.", "Anna has two kids and Anna goes to the gym."),
        ("I really love my job at the bakery.", "Anna really loves Anna's job at the bakery."),
        ("I don't like horror movies at all.", "Anna doesn't like horror movies at all."),
        ("I've got a new bike for myself.", "Anna has got a new bike for themself."),
        ("I watch a movie when I miss home.", "Anna watches a movie when Anna misses home."),
        ("I studied art, I'm a painter now.", "Anna studied art, Anna is a painter now."),
        (
            "Glad my encouragement helped so much.",
            "Anna is glad Anna's encouragement helped so much.",
        ),
        (
            "Painting is part of my life and I have made friends there.",
            "Painting is part of Anna's life and Anna has made friends there.",
        ),
        ("Gonna continue my edu and check out careers!", None),
        # a verb whose past is its base form is the past said once, the present of a habit
        ("I quit Nokia and joined Philips.", "Anna quit Nokia and joined Philips."),
        ("I quit my job at the bank.", "Anna quit Anna's job at the bank."),
        ("I usually put honey in my tea.", "Anna usually puts honey in Anna's tea."),
    ],
)
def test_third_person_rewrite_and_agreement(text: str, expected: str | None) -> None:
    fact = one(f"Anna: {text}")
    if expected is not None:
        assert fact.content == expected
    else:
        assert fact.content == "Anna is going to continue Anna's edu and check out careers."


@pytest.mark.parametrize(
    "text",
    [
        "I love hiking with my dog.",
        "My favourite food is sushi.",
        "I'm really into pottery these days.",
        "I can't stand loud restaurants.",
        "I'm passionate about dancing and music.",
    ],
)
def test_preferences(text: str) -> None:
    fact = one(f"Jon: {text}")
    assert fact.kind == "preference"
    assert fact.memory_type is MemoryType.SEMANTIC
    assert fact.importance == 3


def test_plans_with_and_without_a_date() -> None:
    fact = one("Melanie: We're thinking about going camping next month.")
    assert fact.content == "Melanie and others are thinking about going camping in June 2023."
    assert (fact.kind, fact.memory_type) == ("plan", MemoryType.EPISODIC)
    assert fact.event_at == datetime(2023, 6, 1, tzinfo=UTC)
    undated = one("Jon: I want to open a dance studio downtown.")
    assert undated.content == "Jon wants to open a dance studio downtown."
    assert (undated.kind, undated.event_at) == ("plan", None)
    tomorrow = one("Jon: I'm going to the grand opening tomorrow.")
    assert tomorrow.content == "Jon is going to the grand opening on 9 May 2023."
    assert tomorrow.event_at == datetime(2023, 5, 9, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "content", "day"),
    [
        (
            "I went to a LGBTQ support group yesterday.",
            "Caroline went to a LGBTQ support group on 7 May 2023.",
            datetime(2023, 5, 7, tzinfo=UTC),
        ),
        (
            "Last week I painted a sunrise.",
            "In the week of 1 May 2023 Caroline painted a sunrise.",
            datetime(2023, 5, 1, tzinfo=UTC),
        ),
        (
            "I ran a charity race last Saturday.",
            "Caroline ran a charity race on 6 May 2023.",
            datetime(2023, 5, 6, tzinfo=UTC),
        ),
        (
            "I started transitioning three years ago.",
            "Caroline started transitioning in 2020.",
            datetime(2020, 1, 1, tzinfo=UTC),
        ),
        (
            "I visited my grandma on May 5.",
            "Caroline visited Caroline's grandma on 5 May 2023.",
            datetime(2023, 5, 5, tzinfo=UTC),
        ),
    ],
)
def test_dated_events_resolve_against_the_turn_time(text: str, content: str, day: datetime) -> None:
    fact = one(f"Caroline: {text}")
    assert (fact.content, fact.kind, fact.event_at) == (content, "event", day)
    assert fact.memory_type is MemoryType.EPISODIC
    assert fact.importance >= 3


def test_undated_past_event_takes_the_turn_time() -> None:
    fact = one("Melanie: I painted a lake sunrise with the kids.")
    assert (fact.kind, fact.event_at) == ("event", AT)
    assert rules("Melanie: I painted a lake sunrise with the kids.", at=None)[0].event_at is None


def test_dropped_subject_is_restored_with_lower_confidence() -> None:
    fact = one("Jon: Lost my job as a banker yesterday.")
    assert fact.content == "Jon lost Jon's job as a banker on 7 May 2023."
    assert (fact.kind, fact.importance, fact.confidence) == ("event", 4, 0.6)
    researching = one("Caroline: Researching adoption agencies for my future family.")
    assert (
        researching.content
        == "Caroline is researching adoption agencies for Caroline's future family."
    )
    assert rules("Melanie: Taking care of ourselves is vital for everyone.")[0].content == (
        "Taking care of themselves is vital for everyone."
    )
    # "me" in a later clause leaves the dropped "I" of the first; "Made me think"
    # has "it" for its dropped subject
    dropped = one("Jon: Dropped out of pottery; bookkeeping suits me better.")
    assert dropped.content == "Jon dropped out of pottery; bookkeeping suits Jon better."
    assert rules("Jon: Made me think about my career.") == []


def test_relationships_and_named_relatives() -> None:
    facts = rules("John: My sister Anna just moved to Berlin for work.")
    assert [f.content for f in facts] == [
        "John's sister Anna just moved to Berlin for work.",
        "Anna is John's sister.",
    ]
    assert all(f.kind == "relationship" for f in facts)
    assert facts[0].tags == ("sister",)
    assert facts[1].tags == ("sister", "anna")
    assert facts[1].importance == 4
    married = one("Melanie: I'm lucky to have my husband and kids.")
    assert (married.kind, married.tags) == ("relationship", ("husband",))
    plural = one("John: My wife and I go hiking on Sundays.")
    assert plural.content == "John's wife and John go hiking on Sundays."


def test_habits_are_procedural() -> None:
    fact = one("Melanie: I go running every morning before work.")
    assert fact.content == "Melanie goes running every morning before work."
    assert (fact.kind, fact.memory_type) == ("habit", MemoryType.PROCEDURAL)


def test_skills_are_procedural() -> None:
    fact = one("Maria: I know how to fix a bike chain in five minutes.")
    assert fact.content == "Maria knows how to fix a bike chain in five minutes."
    assert (fact.kind, fact.memory_type, fact.importance) == ("skill", MemoryType.PROCEDURAL, 3)


def test_multi_sentence_turns_split_and_skip_small_talk() -> None:
    facts = rules(
        "Caroline: Hey Mel! Good to see you! How have you been?",
        "Melanie: Hey Caroline! Thanks, Caroline! I'm swamped with the kids & work. "
        "What's up with you? Anything new?",
        "Caroline: I went to a support group yesterday. It was so powerful!",
        "Melanie: Wow, that's cool! Me too! I totally agree, Caroline.",
    )
    assert [(f.content, f.evidence) for f in facts] == [
        ("Melanie is swamped with the kids & work.", (1,)),
        ("Caroline went to a support group on 7 May 2023.", (2,)),
    ]


def test_a_fact_keeps_the_statement_its_speaker_made() -> None:
    # the speaker's own words, first person, for reconcile to read a change as said;
    # a transcript's label of the speaker's own name is no part of them
    facts = rules(
        ("Kim", "Busy month! Anyway, I switched to Dr. Jones."),
        ("Kim", "Kim: Well, my bank is N26 now."),
        ("Kim", "Moved to Lisbon last week."),
    )
    said = {f.content: f.said for f in facts}
    assert said["Kim switched to Dr. Jones."] == "I switched to Dr. Jones."
    assert said["Kim: Well, Kim's bank is N26 now."] == "My bank is N26 now."
    assert said["Kim moved to Lisbon in the week of 1 May 2023."] == "I moved to Lisbon last week."


@pytest.mark.parametrize(
    "text",
    [
        "Did you go to the support group yesterday?",
        "Good morning, how are you doing today?",
        "Thanks so much for the lovely gift!",
        "If I were rich I would buy a boat.",
        "I wish I could fly to Paris.",
        "I'd be a terrible counselor honestly.",
        "Let's go to a dance class together.",
        "Take a look at this painting!",
        "The weather was lovely at the beach.",
        "Me too!",
        "Help me write an email to my landlord about the heater.",
        "Remember when we went to Rome together?",
    ],
)
def test_skipped_sentences(text: str) -> None:
    assert rules(f"Anna: {text}") == []


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Can you recommend a vegan restaurant? I'm vegan.", "Anna is vegan."),
        ("I'm a nurse.", "Anna is a nurse."),
        ("I am diabetic.", "Anna is diabetic."),
        ("I'm 34.", "Anna is 34."),
        ("I'm Sam btw.", "Anna is Sam."),
    ],
)
def test_a_short_statement_of_who_the_speaker_is_is_a_fact(text: str, content: str) -> None:
    """Four words are too few for most sentences, not for "I'm vegan"."""
    assert [f.content for f in rules(f"Anna: {text}")] == [content]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("I use Spotify.", "Anna uses Spotify."),
        ("I support Arsenal.", "Anna supports Arsenal."),
        ("I'm learning French.", "Anna is learning French."),
        ("We love Lisbon!", "Anna and others love Lisbon."),
    ],
)
def test_a_short_statement_of_what_the_speaker_does_with_a_name_is_a_fact(
    text: str, content: str
) -> None:
    """Three words hold a fact when the third is a name: "I use Spotify"."""
    assert [f.content for f in rules(f"Anna: {text}")] == [content]


@pytest.mark.parametrize("text", ["I see John.", "I mean Tuesday.", "I'm at Starbucks."])
def test_talk_about_the_talk_or_a_place_for_now_is_no_short_fact(text: str) -> None:
    assert rules(f"Anna: {text}") == []


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Luna passed away.", "Luna passed away."),
        ("Sadly, Luna died.", "Luna died."),
        ("Grandpa Joe has passed away.", "Grandpa Joe has passed away."),
    ],
)
def test_someone_the_speaker_names_dying_is_a_fact(text: str, content: str) -> None:
    """A death told of a name, without "I" or "my", still changes the speaker's life
    ("Luna passed away" ends "Anna has a dog named Luna")."""
    assert [f.content for f in rules(f"Anna: {text}")] == [content]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Dr. Meier retired.", "Dr. Meier retired."),
        ("Akelius sold the flat to Mrs. Patel.", "Akelius sold the flat to Mrs. Patel."),
        ("Sadly, Pulse Fitness closed.", "Pulse Fitness closed."),
        ("Priya has left the company.", "Priya has left the company."),
        ("Jan has taken over from Petra.", "Jan has taken over from Petra."),
        ("Jan took over the team from Petra.", "Jan took over the team from Petra."),
        ("Petra stepped down as team lead.", "Petra stepped down as team lead."),
    ],
)
def test_a_named_party_ending_what_the_speaker_had_is_a_fact(text: str, content: str) -> None:
    """An ending told of a name, without "I" ("Dr. Meier retired", "Akelius sold the
    flat"), changes the speaker's life as a death does; reconcile decides what."""
    assert [f.content for f in rules(f"Anna: {text}")] == [content]


@pytest.mark.parametrize(
    "text",
    ["The bakery closed early today.", "It left a mark.", "They sold out in an hour."],
)
def test_an_ending_of_no_named_party_is_no_fact(text: str) -> None:
    assert rules(f"Anna: {text}") == []


@pytest.mark.parametrize(
    "text",
    [
        "It died last week.",
        "The printer died again.",
        "He passed away.",
        "the battery died",
        "Queen Elizabeth died in 2022.",
    ],
)
def test_a_thing_or_a_pronoun_dying_is_no_fact(text: str) -> None:
    assert rules(f"Anna: {text}") == []


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("I outgrew my peanut allergy.", "Anna outgrew Anna's peanut allergy."),
        ("I withdrew from the marathon.", "Anna withdrew from the marathon."),
        ("I rebuilt the shed last spring.", "Anna rebuilt the shed last spring."),
    ],
)
def test_a_prefixed_irregular_past_stays_past(text: str, content: str) -> None:
    """'outgrew' is a past as 'grew' is: no "Anna outgrews"."""
    assert [f.content for f in rules(f"Anna: {text}")] == [content]


def test_no_longer_and_an_arrangement() -> None:
    """ "I no longer work" agrees past "no longer"; "I'm flying to Rome on Friday",
    said on a Monday, is a plan for that Friday."""
    assert one("Anna: I no longer work at Nokia.").content == "Anna no longer works at Nokia."
    fact = one("Anna: I'm flying to Rome on Friday.")
    assert (fact.kind, fact.event_at) == ("plan", datetime(2023, 5, 12, tzinfo=UTC))


def test_a_date_that_comes_back_every_year_keeps_no_year() -> None:
    """ "Our anniversary is on June 12", said in May 2023, is no event of June 2022
    (nor of any one year): it stands as said. A birthday that was is an event."""
    (fact,) = rules("Anna: Our anniversary is on June 12.")
    assert (fact.content, fact.kind, fact.event_at) == (
        "Anna's anniversary is on June 12.",
        "statement",
        None,
    )
    (fact,) = rules("Anna: My birthday was last week.")
    assert fact.kind == "event" and fact.event_at is not None


def test_our_after_a_plural_subject_is_theirs() -> None:
    """ "Alex and I went our separate ways" is drawn as "Alex and Anna went their
    separate ways", not "Anna's separate ways"; an "our" with no plural subject
    before it stays the speaker's."""
    assert one("Anna: Alex and I went our separate ways in the spring.").content == (
        "Alex and Anna went their separate ways in the spring."
    )
    assert one("Anna: We moved our savings to N26.").content == (
        "Anna and others moved their savings to N26."
    )
    assert one("Anna: Our flat is in Oslo.").content == "Anna's flat is in Oslo."


def test_a_day_that_comes_back_every_week_is_no_date() -> None:
    """ "I go climbing every Saturday" names no Saturday: the fact keeps the words
    (it read "every on 13 May 2023"); a one-off Saturday still gets its date."""
    (fact,) = rules("Anna: I go climbing every Saturday.")
    assert fact.content == "Anna goes climbing every Saturday."
    (fact,) = rules("Anna: We went climbing each Sunday in May.")
    assert "each Sunday" in fact.content
    fact = one("Anna: I'm flying to Rome on Saturday.")
    assert fact.event_at == datetime(2023, 5, 13, tzinfo=UTC)


@pytest.mark.parametrize(
    "text", ["I'm fine.", "I'm so sorry.", "I'm in!", "I'm listening.", "I'm tired."]
)
def test_how_the_speaker_is_doing_is_no_fact(text: str) -> None:
    assert rules(f"Anna: {text}") == []


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Remember that I'm allergic to peanuts.", "Anna is allergic to peanuts."),
        ("Please remember: my wife's name is Ana.", "Anna's wife's name is Ana."),
        ("Please note that I live in Berlin now.", "Anna lives in Berlin now."),
        ("Don't forget that I hate cilantro.", "Anna hates cilantro."),
        (
            "Keep in mind that my daughter is lactose intolerant.",
            "Anna's daughter is lactose intolerant.",
        ),
        ("Just so you know, I'm vegan now.", "Anna is vegan now."),
        ("FYI I switched to Android.", "Anna switched to Android."),
        ("Note: I moved to Lisbon.", "Anna moved to Lisbon."),
        ("Remember, I'm vegan.", "Anna is vegan."),
    ],
)
def test_a_fact_asked_to_be_kept_is_drawn_without_the_request(text: str, content: str) -> None:
    """ "Remember that ..." asks the memory to keep what follows: the fact is what
    follows, as important as who the speaker is."""
    fact = one(f"Anna: {text}")
    assert fact.content == content
    assert fact.importance >= 4


def test_you_is_the_addressee_and_assistant_turns_are_context() -> None:
    facts = rules(
        "Melanie: I ran a charity race for mental health.",
        "Caroline: I'm really proud of you for taking part.",
    )
    assert facts[1].content == "Caroline is really proud of Melanie for taking part."
    turns = [
        Turn(0, "assistant", "You told me you like tea. I love tea too.", AT, role="assistant"),
        Turn(1, "user", "I prefer green tea over coffee, and you know it.", AT),
        Turn(2, "system", "I am a system prompt that says things.", AT, role="system"),
    ]
    out = RuleFactExtractor().extract(turns)
    assert [f.content for f in out] == [
        "The user prefers green tea over coffee, and the assistant knows it."
    ]
    assert out[0].subject == "the user"


def test_image_caption_becomes_a_shared_photo_event() -> None:
    facts = rules("Melanie: Take a look at this. [image: a photo of a painting of a sunset]")
    assert [(f.content, f.kind, f.tags) for f in facts] == [
        ("Melanie shared a photo of a painting of a sunset.", "event", ("image",))
    ]


def test_rules_are_deterministic_and_check_input() -> None:
    lines = ("Jon: Lost my job yesterday, so I'm gonna start my own dance studio.",) * 2
    assert rules(*lines) == rules(*lines)
    assert len(rules(*lines)) == 1  # the same fact twice is kept once
    with pytest.raises(InvalidInput):
        RuleFactExtractor().extract(["I love tea"])  # type: ignore[list-item]


def test_memory_type_for_every_kind() -> None:
    assert {k: memory_type_for(k).value for k in FACT_KINDS} == {
        "statement": "semantic",
        "preference": "semantic",
        "plan": "episodic",
        "event": "episodic",
        "relationship": "semantic",
        "habit": "procedural",
        "skill": "procedural",
        "opinion": "semantic",
        "goal": "semantic",
    }


# --------------------------------------------------------------------------- with a chat model


class Scripted(ChatModel):
    """Answers each request with the next scripted text, or raises a scripted exception."""

    def __init__(self, *answers: str | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[list[Message]] = []

    @property
    def model_id(self) -> str:
        return "test:scripted"

    def complete(
        self, messages: Sequence[Message], *, json: bool = False, max_tokens: int | None = None
    ) -> Completion:
        self.requests.append(list(messages))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return Completion(text=answer, model=self.model_id)


TURNS = [
    Turn(0, "Caroline", "I went to a LGBTQ support group yesterday.", AT),
    Turn(1, "Melanie", "Wow! What was it like?", AT),
    Turn(2, "Caroline", "Powerful. I love my new friends there.", AT),
]
GOOD = {
    "content": "Caroline went to an LGBTQ support group on 7 May 2023.",
    "kind": "event",
    "subject": "Caroline",
    "importance": 4,
    "evidence": [0],
    "event_at": "2023-05-07",
    "tags": ["LGBTQ", "support group"],
    "confidence": 0.9,
}


def answer(*facts: dict[str, Any]) -> str:
    return json.dumps({"facts": list(facts)})


def test_llm_facts_are_used() -> None:
    chat = Scripted(answer(GOOD, {**GOOD, "kind": "Preference", "evidence": [2, 0, 2]}))
    ex = LLMFactExtractor(chat)
    facts = ex.extract(TURNS)
    assert facts[0] == Fact(
        content=str(GOOD["content"]),
        kind="event",
        memory_type=MemoryType.EPISODIC,
        importance=4,
        evidence=(0,),
        subject="Caroline",
        event_at=datetime(2023, 5, 7, tzinfo=UTC),
        tags=("lgbtq", "support group"),
        confidence=0.9,
    )
    assert (facts[1].kind, facts[1].memory_type, facts[1].evidence) == (
        "preference",
        MemoryType.SEMANTIC,
        (0, 2),
    )
    assert (ex.calls, ex.fallbacks, ex.dropped) == (1, 0, 0)
    system, user = chat.requests[0]
    assert system == Message("system", SYSTEM_PROMPT)
    payload = json.loads(user.content.split("\n", 1)[1])
    assert payload[0] == {
        "index": 0,
        "speaker": "Caroline",
        "role": "user",
        "at": "2023-05-08T13:56:00+00:00",
        "text": TURNS[0].text,
    }


@pytest.mark.parametrize(
    "bad",
    [
        {**GOOD, "content": "   "},
        {**GOOD, "content": "x" * 2001},
        {**GOOD, "kind": "gossip"},
        {**GOOD, "evidence": [7]},
        {**GOOD, "evidence": []},
        {**GOOD, "importance": 6},
        {**GOOD, "importance": 0},
        {**GOOD, "event_at": "yesterday"},
        {**GOOD, "confidence": 1.5},
        {key: v for key, v in GOOD.items() if key != "content"},
        "not an object",
    ],
)
def test_invalid_llm_facts_are_dropped_one_by_one(bad: Any) -> None:
    ok = {**GOOD, "subject": "", "event_at": None}
    ex = LLMFactExtractor(Scripted(answer(bad, ok)))
    facts = ex.extract(TURNS)
    assert [(f.content, f.subject, f.event_at) for f in facts] == [
        (GOOD["content"], "Caroline", None)  # an empty subject falls back to the speaker
    ]
    assert (ex.fallbacks, ex.dropped) == (0, 1)


@pytest.mark.parametrize(
    "failure",
    [
        "this is not JSON",
        "[1, 2, 3]",
        json.dumps({"memories": []}),
        answer({**GOOD, "kind": "gossip"}, {**GOOD, "evidence": [9]}),  # nothing usable
        LLMError("endpoint down"),
        TimeoutError("slow"),
    ],
)
def test_unusable_answers_fall_back_to_the_rules(failure: str | Exception) -> None:
    ex = LLMFactExtractor(Scripted(failure))
    assert ex.extract(TURNS) == RuleFactExtractor().extract(TURNS)
    assert (ex.calls, ex.fallbacks) == (1, 1)


def test_one_request_per_window_and_evidence_stays_in_its_window() -> None:
    second = {**GOOD, "content": "Caroline loves her new friends.", "kind": "preference"}
    chat = Scripted(
        "not JSON",  # window 1 (turns 0-1) falls back to the rules
        answer({**second, "evidence": [2]}, {**second, "evidence": [0]}),  # 0 is not in window 2
    )
    ex = LLMFactExtractor(chat, window=2)
    facts = ex.extract(TURNS)
    assert [f.evidence for f in facts] == [(0,), (2,)]
    assert facts[0].content == "Caroline went to a LGBTQ support group on 7 May 2023."
    assert facts[1].content == "Caroline loves her new friends."
    assert (ex.calls, ex.fallbacks, ex.dropped) == (2, 1, 1)
    assert [len(json.loads(r[1].content.split("\n", 1)[1])) for r in chat.requests] == [2, 1]
    assert ex.extract([]) == [] and ex.calls == 2


def test_empty_answer_is_valid_and_fallback_is_configurable() -> None:
    class Nothing(RuleFactExtractor):
        def extract(self, turns: Sequence[Turn]) -> list[Fact]:
            return []

    assert LLMFactExtractor(Scripted(answer())).extract(TURNS) == []
    assert LLMFactExtractor(Scripted("oops"), fallback=Nothing()).extract(TURNS) == []


def test_extractor_for_and_config_errors() -> None:
    assert type(extractor_for(None)) is RuleFactExtractor
    chat = Scripted()
    llm = extractor_for(chat)
    assert isinstance(llm, LLMFactExtractor) and llm.chat is chat and llm.window == 20
    with pytest.raises(ConfigError):
        LLMFactExtractor(chat, window=0)
    with pytest.raises(ConfigError):
        LLMFactExtractor("gpt")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        LLMFactExtractor(chat, fallback="rules")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- LoCoMo coverage


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not present")
def test_locomo_dev_conversation_coverage() -> None:
    from kenning.bench.facts import run_fact_coverage

    result = run_fact_coverage(LOCOMO, "dev", sample_ids=["conv-26"], sample=5)
    # Measured on conv-26: 419 turns, 484 facts, 120 of 133 evidence turns covered (0.902).
    assert result["conversations"] == 1 and result["turns"] == 419
    assert result["evidence_turns"] == 133
    assert result["evidence_coverage"] >= 0.86
    assert 0.7 <= result["facts_per_turn"] <= 1.5
    assert len(result["sample"]) == 5
    json.dumps(result)  # JSON-able


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Sad news, Rex died in March.", "Rex died in March 2023."),
        ("Big news: I got hired at Figma!", "Kim got hired at Figma."),
        ("Update: we moved to Bremen.", "Kim and others moved to Bremen."),
        ("Quick one, I live in Hamburg.", "Kim lives in Hamburg."),
        ("Heads up, I moved to Bremen.", "Kim moved to Bremen."),
        # news as what the sentence is about stays
        ("The news is that I live in Bremen.", "The news is that Kim lives in Bremen."),
    ],
)
def test_an_announcement_before_the_fact_is_no_part_of_it(text: str, content: str) -> None:
    # "Sad news," says how the speaker feels about what follows; left in, it hid
    # the death from the rules ("Sad news, Rex died" drew nothing)
    assert [f.content for f in rules(("Kim", text))] == [content]


@pytest.mark.parametrize(
    ("text", "contents"),
    [
        ("Hi, I'm Kim and I'm a nurse.", ["Kim is a nurse."]),
        ("My name is Kim and I live in Rome.", ["Kim lives in Rome."]),
        ("Quick one, I'm Kim, I live in Hamburg.", ["Kim lives in Hamburg."]),
        ("I'm Kim.", []),  # the speaker's own name: every fact of theirs says it
        ("I am Kim, a teacher from Oslo.", ["Kim is Kim, a teacher from Oslo."]),
        # a name and "I" are a plural subject only where the name opens the clause
        ("Alex and I moved to Berlin.", ["Alex and Kim moved to Berlin."]),
        ("I met Tom and I think he likes me.", ["Kim met Tom and Kim thinks he likes Kim."]),
    ],
)
def test_the_speaker_naming_themself_is_no_fact_and_no_second_subject(
    text: str, contents: list[str]
) -> None:
    # "I'm Kim and I'm a nurse" read "Kim is Kim and Kim are a nurse": the name the
    # clause before ends on is no subject beside "I"
    assert [f.content for f in rules(("Kim", text))] == contents
