"""The currency benchmark's second tuning set: ten more kinds, tuned on like dev.

The dev kinds name most values with capitals (a city, a car, a bank) and
change them in a few set ways. The kinds here are written to widen what tuning
sees, in the shape of :mod:`.currency_phrases` (``values``, ``first``,
``update``, ``now``, ``before``, ``lookalike``, ``other``):

* values in lower case (an instrument, a coffee order), so nothing but the
  words says which value is which;
* values that are people (a manager), whom other people's facts also name;
* changes told as something done ("I ported my number to O2"), as an ending
  and a start in one breath, or with no word of change at all ("These days
  it's the cello").

The last five (an insurer, a supermarket, an airline, a bike, an energy
supplier) were added later, written fresh to see how the rules generalise to
kinds they were never tuned on: values a speaker leaves in passing ("No more
Tesco for me", "I'm not going back to Aldi", "My Bupa policy ran out"),
impersonal first statements ("The flat is on an Enel tariff") and changes that
share no word with what they change ("The first bill from EDF came today").

``kenning bench currency --split tune`` runs them beside the dev kinds (the
other attributes their users state), as ``probe`` runs its own kinds. Tune on
``dev`` and ``tune``; report ``holdout``; check on ``probe``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["TUNE_KINDS"]

TUNE_KINDS: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = {
    "instrument": {
        "values": (
            "guitar",
            "piano",
            "cello",
            "violin",
            "drums",
            "saxophone",
            "ukulele",
            "flute",
            "trumpet",
            "bass guitar",
            "clarinet",
            "harp",
        ),
        "first": (
            "I play the {v}.",
            "I've been taking {v} lessons for a year.",
            "Practising the {v} is how I unwind after work.",
            "My instrument is the {v}.",
        ),
        "update": (
            "I gave up the {old} and started {new} lessons.",
            "These days it's the {new} I practise every evening.",
            "I sold my {old}; I'm learning the {new} now.",
            "Switched from {old} to {new} this spring.",
        ),
        "now": (
            "What instrument do I play now?",
            "Which instrument am I learning these days?",
            "What do I practise at the moment?",
            "What is my instrument currently?",
        ),
        "before": (
            "What instrument did I play before?",
            "Which instrument did I play in {year}?",
            "What did I practise before I switched?",
            "Which instrument did I give up?",
        ),
        "lookalike": (
            "My {rel} plays the {v}.",
            "My {rel} is taking {v} lessons.",
            "My {rel} practises the {v} every day.",
        ),
        "other": ("What instrument does my {rel} play?", "Does my {rel} play anything?"),
    },
    "manager": {
        "values": (
            "Priya",
            "Tom Becker",
            "Sofia",
            "Daniel",
            "Mei Chen",
            "Lukas",
            "Hannah",
            "Omar",
            "Claire Dubois",
            "Marek",
            "Ingrid",
            "Ravi",
        ),
        "first": (
            "My manager is {v}.",
            "I report to {v}.",
            "{v} is my boss and a fair one.",
            "My team lead, {v}, signs off my holidays.",
        ),
        "update": (
            "{old} left the company; I report to {new} now.",
            "I have a new boss: {new}.",
            "After the reorg my manager is {new}.",
            "Had my first one-to-one with {new}, who took over the team from {old}.",
        ),
        "now": (
            "Who is my manager now?",
            "Who do I report to these days?",
            "Who is my current boss?",
            "Who signs off my holidays at the moment?",
        ),
        "before": (
            "Who was my manager before?",
            "Who did I report to in {year}?",
            "Who was my previous boss?",
            "Who led my team before the change?",
        ),
        "lookalike": (
            "My {rel}'s manager is {v}.",
            "My {rel} reports to {v}.",
            "My {rel}'s boss is {v}.",
        ),
        "other": ("Who is my {rel}'s manager?", "Who does my {rel} report to?"),
    },
    "team": {
        "values": (
            "Arsenal",
            "Liverpool",
            "Bayern Munich",
            "Real Madrid",
            "Ajax",
            "Juventus",
            "Celtic",
            "Borussia Dortmund",
            "Benfica",
            "Napoli",
            "Galatasaray",
            "Olympique Lyon",
        ),
        "first": (
            "I support {v}.",
            "I'm a {v} fan through and through.",
            "My football team is {v}.",
            "I never miss a {v} match.",
        ),
        "update": (
            "I've switched allegiance to {new}.",
            "I'm done with {old}; {new} is my team now.",
            "Bought a {new} season ticket this year.",
            "My son talked me into supporting {new} instead of {old}.",
        ),
        "now": (
            "Which football team do I support now?",
            "What team am I a fan of these days?",
            "Who is my football team currently?",
            "Which club do I follow at the moment?",
        ),
        "before": (
            "Which team did I support before?",
            "What football team did I follow in {year}?",
            "Which club was I a fan of before I switched?",
            "What was my previous team?",
        ),
        "lookalike": (
            "My {rel} supports {v}.",
            "My {rel} is a {v} fan.",
            "My {rel} never misses a {v} match.",
        ),
        "other": ("Which team does my {rel} support?", "What club does my {rel} follow?"),
    },
    "coffee": {
        "values": (
            "flat white",
            "cappuccino",
            "oat latte",
            "espresso",
            "americano",
            "cortado",
            "cold brew",
            "macchiato",
            "mocha",
            "chai latte",
            "filter coffee",
            "matcha latte",
        ),
        "first": (
            "My usual coffee order is a {v}.",
            "I always get a {v} at the café.",
            "A {v} in the morning is all I need.",
            "I drink a {v} every morning.",
        ),
        "update": (
            "I've moved on from {old} to {new}.",
            "Lately I order a {new} instead.",
            "My go-to is a {new} these days.",
            "Cut out the {old}; it's a {new} for me now.",
        ),
        "now": (
            "What is my usual coffee order now?",
            "What coffee do I drink these days?",
            "What do I order at the café at the moment?",
            "What's my current go-to drink?",
        ),
        "before": (
            "What coffee did I drink before?",
            "What was my usual order in {year}?",
            "What did I order before I changed?",
            "What was my previous go-to coffee?",
        ),
        "lookalike": (
            "My {rel} always orders a {v}.",
            "My {rel} drinks a {v} every morning.",
            "My {rel}'s usual order is a {v}.",
        ),
        "other": ("What coffee does my {rel} drink?", "What does my {rel} order at the café?"),
    },
    "carrier": {
        "values": (
            "Vodafone",
            "O2",
            "T-Mobile",
            "Orange",
            "Three",
            "Telekom",
            "Lebara",
            "Swisscom",
            "Telia",
            "Movistar",
            "EE",
            "Proximus",
        ),
        "first": (
            "My mobile carrier is {v}.",
            "I'm on a {v} contract.",
            "I have a {v} SIM.",
            "My phone plan is with {v}.",
        ),
        "update": (
            "I ported my number to {new}.",
            "Cancelled my {old} contract and signed up with {new}.",
            "My new SIM from {new} arrived today.",
            "I left {old} for a cheaper plan with {new}.",
        ),
        "now": (
            "Which mobile carrier am I with now?",
            "Who is my phone plan with these days?",
            "What is my current mobile provider?",
            "Which network is my SIM on at the moment?",
        ),
        "before": (
            "Which carrier was I with before?",
            "Who was my mobile provider in {year}?",
            "Which phone contract did I cancel?",
            "What was my previous network?",
        ),
        "lookalike": (
            "My {rel} is with {v}.",
            "My {rel} has a {v} contract.",
            "My {rel}'s phone plan is with {v}.",
        ),
        "other": ("Which carrier is my {rel} with?", "Who is my {rel}'s phone plan with?"),
    },
    "insurer": {
        "values": (
            "Allianz",
            "AXA",
            "Aviva",
            "Zurich",
            "Generali",
            "Bupa",
            "Cigna",
            "Ergo",
            "Vitality",
            "DKV",
            "Helsana",
            "Techniker",
        ),
        "first": (
            "My health insurance is with {v}.",
            "I'm insured with {v}.",
            "{v} covers my medical bills.",
            "I pay my health cover to {v} every month.",
        ),
        "update": (
            "I switched my health insurance to {new}.",
            "My {old} policy ran out, so I took out cover with {new}.",
            "From this month my insurer is {new}.",
            "Dropped {old}; {new} offered me a better deal on health cover.",
        ),
        "now": (
            "Who is my health insurer now?",
            "Which company covers my medical bills these days?",
            "Who am I insured with at the moment?",
            "What is my current health insurance?",
        ),
        "before": (
            "Who was my health insurer before?",
            "Which insurer did I have in {year}?",
            "Which health insurance did I drop?",
            "Who covered my medical bills previously?",
        ),
        "lookalike": (
            "My {rel} is insured with {v}.",
            "My {rel}'s health insurance is with {v}.",
            "My {rel} pays {v} for health cover.",
        ),
        "other": ("Who is my {rel} insured with?", "Which insurer does my {rel} have?"),
    },
    "supermarket": {
        "values": (
            "Lidl",
            "Aldi",
            "Tesco",
            "Carrefour",
            "Rewe",
            "Edeka",
            "Albert Heijn",
            "Mercadona",
            "Sainsbury's",
            "Waitrose",
            "Spar",
            "Coop",
        ),
        "first": (
            "I do my weekly shop at {v}.",
            "{v} is where I buy my groceries.",
            "I get all my groceries from {v}.",
            "My local supermarket is {v}.",
        ),
        "update": (
            "I've started shopping at {new} since it opened round the corner.",
            "No more {old} for me; the weekly shop is at {new} now.",
            "Tried {new} last month and I'm not going back to {old}.",
            "These days I get my groceries at {new}.",
        ),
        "now": (
            "Where do I do my grocery shopping now?",
            "Which supermarket do I use these days?",
            "Where do I buy my groceries at the moment?",
            "What is my usual supermarket currently?",
        ),
        "before": (
            "Where did I shop for groceries before?",
            "Which supermarket did I use in {year}?",
            "Which supermarket did I stop going to?",
            "What was my previous supermarket?",
        ),
        "lookalike": (
            "My {rel} shops at {v}.",
            "My {rel} buys groceries at {v}.",
            "My {rel} swears by {v} for the weekly shop.",
        ),
        "other": ("Where does my {rel} shop?", "Which supermarket does my {rel} use?"),
    },
    "airline": {
        "values": (
            "Lufthansa",
            "KLM",
            "Ryanair",
            "easyJet",
            "Iberia",
            "TAP",
            "Finnair",
            "SAS",
            "Swiss",
            "Air France",
            "Wizz Air",
            "Vueling",
        ),
        "first": (
            "I always fly {v}.",
            "I collect miles with {v}.",
            "For work trips I book {v}.",
            "My frequent flyer card is from {v}.",
        ),
        "update": (
            "After the strikes I moved my miles to {new}.",
            "I fly {new} now that {old} dropped my route.",
            "Booked {new} again; I've given up on {old}.",
            "Got my new {new} frequent flyer card in the post.",
        ),
        "now": (
            "Which airline do I fly with now?",
            "What airline do I book these days?",
            "Who do I collect miles with at the moment?",
            "What is my current airline?",
        ),
        "before": (
            "Which airline did I fly before?",
            "What airline did I use in {year}?",
            "Which airline did I give up on?",
            "Who did I collect miles with previously?",
        ),
        "lookalike": (
            "My {rel} always flies {v}.",
            "My {rel} collects miles with {v}.",
            "My {rel} books {v} for every trip.",
        ),
        "other": ("Which airline does my {rel} fly?", "Who does my {rel} collect miles with?"),
    },
    "bike": {
        "values": (
            "Brompton",
            "Trek",
            "Cube",
            "Canyon",
            "Giant",
            "Specialized",
            "VanMoof",
            "Gazelle",
            "Cannondale",
            "Orbea",
            "Scott",
            "Batavus",
        ),
        "first": (
            "I ride a {v} to work.",
            "My bike is a {v}.",
            "I cycle everywhere on my {v}.",
            "I got a {v} bike a few years ago.",
        ),
        "update": (
            "My {old} was stolen, so I bought a {new}.",
            "I'm riding a {new} these days.",
            "Traded in the {old} for a {new}.",
            "Picked up my new {new} from the bike shop on Saturday.",
        ),
        "now": (
            "What bike do I ride now?",
            "Which bike do I cycle to work on these days?",
            "What is my bike at the moment?",
            "What bike do I currently have?",
        ),
        "before": (
            "What bike did I ride before?",
            "Which bike did I have in {year}?",
            "Which bike was stolen?",
            "What was my previous bike?",
        ),
        "lookalike": (
            "My {rel} rides a {v}.",
            "My {rel} cycles on a {v}.",
            "My {rel} just bought a {v} bike.",
        ),
        "other": ("What bike does my {rel} ride?", "Which bike does my {rel} have?"),
    },
    "energy": {
        "values": (
            "Octopus",
            "E.ON",
            "EDF",
            "Vattenfall",
            "Iberdrola",
            "Ovo",
            "Engie",
            "Enel",
            "British Gas",
            "Eneco",
            "Naturgy",
            "RWE",
        ),
        "first": (
            "Our electricity comes from {v}.",
            "My energy supplier is {v}.",
            "I pay {v} for gas and power.",
            "The flat is on a {v} tariff.",
        ),
        "update": (
            "We switched our energy to {new} when the fixed deal ended.",
            "Left {old} after the price hike and joined {new}.",
            "The first bill from {new} came today.",
            "Our power is with {new} now.",
        ),
        "now": (
            "Who is my energy supplier now?",
            "Which company supplies our electricity these days?",
            "Who do I pay for gas and power at the moment?",
            "What is my current electricity provider?",
        ),
        "before": (
            "Who was our energy supplier before?",
            "Which electricity provider did I have in {year}?",
            "Which energy company did we leave?",
            "Who supplied our power previously?",
        ),
        "lookalike": (
            "My {rel} gets electricity from {v}.",
            "My {rel}'s energy supplier is {v}.",
            "My {rel} is on a {v} tariff.",
        ),
        "other": ("Who supplies my {rel}'s electricity?", "Which energy company is my {rel} with?"),
    },
}
