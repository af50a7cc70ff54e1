"""The common nouns that name people: the indexer types a name by them ("the actor X",
"son of X"), and the query side keeps people apart from things ("Go and buy *it*" is no
boy)."""

from __future__ import annotations

import re

PERSON_NOUNS = frozenset(
    """
actor actress singer songwriter singer-songwriter musician rapper composer conductor pianist guitarist
drummer bassist violinist cellist vocalist tenor soprano baritone mezzo-soprano contralto producer director
filmmaker screenwriter writer author novelist poet playwright dramatist lyricist librettist journalist editor
critic columnist historian philosopher scientist physicist chemist biologist botanist zoologist geologist
mathematician astronomer economist sociologist anthropologist archaeologist linguist engineer architect
inventor painter sculptor artist photographer cinematographer designer illustrator cartoonist animator
comedian dancer choreographer model presenter host broadcaster announcer commentator politician
diplomat statesman stateswoman lawyer attorney barrister solicitor judge jurist magistrate businessman
businesswoman businessperson entrepreneur banker merchant trader industrialist executive manager
footballer player cricketer athlete boxer wrestler swimmer cyclist runner sprinter skier golfer jockey
racer shooter fencer rower sailor pitcher catcher outfielder infielder quarterback goalkeeper defender
midfielder striker winger linebacker coach referee umpire officer soldier admiral commander colonel captain
lieutenant pilot aviator astronaut explorer navigator missionary priest bishop archbishop cardinal pope
monk nun abbot abbess theologian rabbi imam cleric preacher pastor minister king queen prince princess
emperor empress duke duchess archduke archduchess count countess earl baron baroness baronet lord lady knight
noble nobleman noblewoman peer aristocrat monarch ruler sultan tsar czar khan chieftain chief margrave
landgrave viscount marquess marquis elector pharaoh caliph emir sheikh shah regent governor mayor senator
president chancellor consul ambassador envoy secretary official administrator bureaucrat sheriff
teacher professor lecturer academic scholar educator researcher physician doctor surgeon nurse dentist
psychiatrist psychologist activist philanthropist socialite courtier spy criminal murderer bandit pirate
outlaw farmer chef cook personality celebrity figure man woman boy girl person pioneer founder co-founder
leader member rider driver climber mountaineer skater gymnast sportsperson sportsman sportswoman
clerk poulterer baker butcher grocer tailor servant maid housemaid butler footman coachman landlord landlady
shopkeeper innkeeper laundress washerwoman charwoman undertaker beggar stranger visitor guest neighbour neighbor
gentleman gentlewoman lad lass youth orphan infant baby schoolboy schoolgirl schoolmaster schoolmistress master
thief robber prisoner fisherman shepherd blacksmith carpenter weaver porter messenger watchman constable policeman
entertainer performer magician puppeteer translator supervisor librarian archivist curator
""".split()
)

KIN_NOUNS = frozenset(
    """
son daughter wife husband father mother brother sister sibling child children grandson granddaughter
grandfather grandmother grandchild nephew niece cousin uncle aunt widow widower mistress consort spouse
heir heiress successor predecessor student pupil disciple protege protégé apprentice stepson stepdaughter
stepfather stepmother half-brother half-sister brother-in-law sister-in-law father-in-law mother-in-law
son-in-law daughter-in-law fiancé fiancée partner lover friend
""".split()
)

_IRREGULAR_PLURALS = {"men": "man", "women": "woman", "people": "person", "gentlemen": "gentleman"}
_PLURAL = re.compile(r"(?<=[^s])s$")


def names_people(word: str) -> bool:
    """The noun names a person or people, singular or plural ("boy", "sisters", "men")."""
    word = word.lower()
    word = _IRREGULAR_PLURALS.get(word, word)
    return any(form in PERSON_NOUNS or form in KIN_NOUNS for form in (word, _PLURAL.sub("", word)))
