/**
 * Word lists the similarity guard reads. A change to a *critical* word (negation, quantity, time, polarity,
 * question word) changes what a request means, so it is never served another recording, whatever the score.
 * Function words are cheap to add or drop ("please", "the"). Contractions expand so "what's" equals "what is".
 */

const words = (s: string): ReadonlySet<string> => new Set(s.split(/\s+/).filter(Boolean));

export const NEGATIONS = words(`
  not no never none nobody nothing neither nor nowhere without except cannot unless hardly barely
`);

export const QUANTITIES = words(`
  zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
  eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion trillion
  dozen half quarter double triple twice thrice once single pair couple few several many much more most less least
  fewer all every each any some both first second third fourth fifth sixth seventh eighth ninth tenth last next
  previous only percent per minimum maximum min max
`);

export const TIME_WORDS = words(`
  monday tuesday wednesday thursday friday saturday sunday january february march april june july august
  september october november december today tomorrow yesterday tonight morning afternoon evening night weekend week
  month year hour minute ago before after earlier later am pm daily weekly monthly yearly
`);

/** Words whose opposite is a different request: "flights to Paris" is not "flights from Paris". */
export const POLARITY = words(`
  yes true false on off enable disable enabled disabled increase decrease raise lower buy sell above below higher
  larger smaller bigger greater better worse best worst add remove delete create allow deny accept reject approve
  decline include exclude to from into onto up down open close start stop left right north south east west
  positive negative high low hot cold old new
`);

/** Question words: "who" and "when" ask different things about the same subject. */
export const QUESTION_WORDS = words(`what which who whom whose how why when where whether`);

/** Function and politeness words: adding or dropping one barely changes a request. */
export const FUNCTION_WORDS = words(`
  a an the of in at for by with and or but is are was were be been being do does did have has had this that these
  those it its i you we they he she me my your our their us them him her his please kindly just can could would
  should will shall might must as so if then than there here also really very quite about such
  let lets hi hello thanks thank ok okay well now
`);

/** Contractions and their expansions, so "what's" and "what is" are the same words. */
export const CONTRACTIONS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    "i'm": ['i', 'am'],
    "you're": ['you', 'are'],
    "we're": ['we', 'are'],
    "they're": ['they', 'are'],
    "he's": ['he', 'is'],
    "she's": ['she', 'is'],
    "it's": ['it', 'is'],
    "that's": ['that', 'is'],
    "what's": ['what', 'is'],
    "where's": ['where', 'is'],
    "who's": ['who', 'is'],
    "there's": ['there', 'is'],
    "here's": ['here', 'is'],
    "how's": ['how', 'is'],
    "let's": ['let', 'us'],
    "isn't": ['is', 'not'],
    "aren't": ['are', 'not'],
    "wasn't": ['was', 'not'],
    "weren't": ['were', 'not'],
    "don't": ['do', 'not'],
    "doesn't": ['does', 'not'],
    "didn't": ['did', 'not'],
    "can't": ['can', 'not'],
    cannot: ['can', 'not'],
    "won't": ['will', 'not'],
    "wouldn't": ['would', 'not'],
    "shouldn't": ['should', 'not'],
    "couldn't": ['could', 'not'],
    "haven't": ['have', 'not'],
    "hasn't": ['has', 'not'],
    "hadn't": ['had', 'not'],
    "mustn't": ['must', 'not'],
    "i've": ['i', 'have'],
    "you've": ['you', 'have'],
    "we've": ['we', 'have'],
    "they've": ['they', 'have'],
    "i'll": ['i', 'will'],
    "you'll": ['you', 'will'],
    "we'll": ['we', 'will'],
    "they'll": ['they', 'will'],
    "it'll": ['it', 'will'],
    "i'd": ['i', 'would'],
    "you'd": ['you', 'would'],
    "we'd": ['we', 'would'],
    "they'd": ['they', 'would'],
  }),
);

/**
 * Places that qualify an address ("..., CA", "..., United Kingdom"): a tool argument written with or without its
 * region means the same place when everything before it is the same.
 */
export const REGIONS = words(`
  al ak az ar ca co ct de fl ga hi id il in ia ks ky la me md ma mi mn ms mo mt ne nv nh nj nm ny nc nd oh ok or pa ri
  sc sd tn tx ut vt va wa wv wi wy dc alabama alaska arizona arkansas california colorado connecticut delaware florida
  georgia hawaii idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota
  mississippi missouri montana nebraska nevada ohio oklahoma oregon pennsylvania tennessee texas utah vermont virginia
  washington wisconsin wyoming us usa uk gb eu uae united states kingdom america england scotland wales ireland france
  germany spain italy portugal netherlands belgium switzerland austria sweden norway denmark finland poland canada
  mexico brazil argentina japan china india australia zealand singapore korea de fr es it nl be ch at se no dk fi pl
  jp cn au nz sg kr br mx ar ie ontario quebec bc ab on qc nsw vic qld
`);

/** Is `word` critical: a change to it changes the meaning of the request? Returns the category, or undefined. */
export function criticalCategory(word: string): string | undefined {
  if (/\p{N}/u.test(word)) return 'number';
  if (NEGATIONS.has(word)) return 'negation';
  if (QUANTITIES.has(word)) return 'quantity';
  if (TIME_WORDS.has(word)) return 'time';
  if (QUESTION_WORDS.has(word)) return 'question word';
  if (POLARITY.has(word)) return 'polarity';
  if (/^[$€£¥%+=<>#@&]$/.test(word)) return 'symbol';
  return undefined;
}
