"""Word lists for the offline English extractor (written for this project).

STOPWORDS: function words, pronouns, interjections and other words that are never a
name on their own, even when capitalised at the start of a sentence.
NOT_NOUN_WORDS: frequent verbs, adverbs and evaluative adjectives that would otherwise
form noise "noun phrases" such as "really good" or "pretty much".
GROUP_ADJECTIVES: adjectives of nationality, language, religion, politics and direction.
Capitalised but not names on their own ("an American actor", "a Hindi film"): as entities
they would be hubs joining everything American; as part of a name they stay ("American
Civil War").
"""

STOPWORDS = set(
    """
a about above across after afterwards again against ago ah ahead aha all almost alone along already also
although always am among an and another any anybody anyhow anyone anything anyway anywhere are around as at
away aye back be became because become becomes been before beforehand behind being below beside besides
between beyond both but by can cannot could dear did do does doing done down during each eh either else
elsewhere enough etc even ever every everybody everyone everything everywhere except few for former
formerly from further had has have having he hello hence her here hereafter hereby herein hers herself hey
hi him himself his how however hmm i ie if in indeed inside instead into is it its itself just last latter
least less let like likewise lot lots many may maybe me meanwhile might mine more moreover most mostly much
must my myself namely neither never nevertheless next no nobody none noone nor not nothing now nowhere o
of off often oh ok okay on once one only onto or other others otherwise our ours ourselves out outside over
own per perhaps please quite rather really right same say says shall she should since so some somebody
somehow someone something sometime sometimes somewhere still such than that the their theirs them
themselves then thence there thereafter thereby therefore therein thereupon these they this those though
through throughout thru thus to together too toward towards under unless until up upon us very via was we
well were what whatever when whence whenever where whereafter whereas whereby wherein whereupon wherever
whether which while whither who whoever whole whom whose why will with within without would yeah yes yet
you your yours yourself yourselves um uh mm mhm wow yep nope alright anyway hmm huh oops ha haha
monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday tonight
january february march april may june july august september october november december
first second third fourth fifth sixth seventh eighth ninth tenth two three four five six seven eight nine
ten hundred thousand million billion chapter stave part section page figure table note see also
thank thanks sure great good fine absolutely exactly certainly right yes true interesting cool
born according
""".split()
)

NOT_NOUN_WORDS = set(
    """
able actually almost already always amazing awesome bad basically best better big certain clearly
different done easy entire especially exactly extremely fairly few fun going gone got great hard
huge important incredible interesting kind large later least less likely little long lot many maybe
more most much new nice old other particular pretty probably quite real really right same several
short simple small so sort special specific such super sure terrible thing things totally true truly
very whole wonderful wrong young
get gets getting got gotten go goes went make makes made making take takes took taken taking know knows
knew known knowing think thinks thought thinking see sees saw seen seeing come comes came coming want
wants wanted wanting look looks looked looking use uses used using find finds found finding give gives
gave given giving tell tells told telling work works worked working seem seems seemed feel feels felt
feeling try tries tried trying leave leaves left leaving call calls called calling keep keeps kept
keeping let lets begin began begun beginning show shows showed shown showing hear heard hearing play
played playing run ran running move moved moving live lived living believe believed bring brought
happen happened happens write wrote written writing sit sat stand stood lose lost pay paid meet met
include included continue continued set learn learned change changed lead led understand understood
watch watched follow followed stop stopped create created speak spoke spoken read spend spent grow grew
grown open opened walk walked win won offer offered remember remembered love loved consider considered
appear appeared buy bought wait waited serve served die died send sent expect expected build built stay
stayed fall fell cut reach reached kill killed remain remained suggest suggested raise raised pass passed
sell sold require required report reported decide decided pull pulled mean means meant said saying says
doing does did gonna wanna gotta kinda sorta yeah okay
""".split()
)

GROUP_ADJECTIVES = set(
    """
american british english french german italian spanish portuguese dutch belgian swiss austrian swedish
norwegian danish finnish icelandic irish scottish welsh polish czech slovak hungarian romanian bulgarian
greek turkish russian ukrainian belarusian serbian croatian bosnian slovene slovenian macedonian albanian
montenegrin lithuanian latvian estonian georgian armenian azerbaijani kazakh uzbek turkmen kyrgyz tajik
mongolian chinese japanese korean taiwanese vietnamese thai cambodian laotian burmese malaysian indonesian
filipino singaporean indian pakistani bangladeshi nepali nepalese afghan iranian persian iraqi syrian
lebanese israeli palestinian jordanian saudi yemeni omani emirati qatari kuwaiti bahraini egyptian libyan
tunisian algerian moroccan sudanese ethiopian eritrean somali kenyan ugandan tanzanian rwandan nigerian
ghanaian senegalese malian cameroonian congolese angolan zambian zimbabwean mozambican namibian canadian
mexican cuban jamaican haitian dominican guatemalan honduran salvadoran nicaraguan panamanian colombian
venezuelan ecuadorian peruvian bolivian chilean argentine argentinian uruguayan paraguayan brazilian
australian fijian samoan tongan soviet yugoslav yugoslavian czechoslovak prussian bavarian ottoman
byzantine european african asian arab arabic hispanic scandinavian nordic baltic balkan slavic celtic
flemish catalan basque galician andalusian sicilian neapolitan venetian tuscan corsican breton norman
saxon kurdish tamil telugu malayalam kannada hindi urdu bengali punjabi marathi gujarati sinhala sinhalese
hebrew yiddish latin sanskrit cantonese mandarin tagalog swahili afrikaans maori hawaiian texan
californian anglo christian catholic protestant muslim islamic jewish buddhist hindu orthodox anglican
lutheran methodist baptist republican democrat democratic conservative liberal socialist communist nazi
fascist western eastern northern southern
""".split()
)
