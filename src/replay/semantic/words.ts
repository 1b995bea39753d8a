/**
 * Word lists the similarity guard reads. A change to a *critical* word (negation, modal, comparison, quantity, time,
 * polarity, question word, logic) changes what a request means, so it is never served another recording, whatever
 * the score. Function words are cheap to add or drop ("please", "the"); replacing one by another of a different
 * kind ("written by" / "written for", "is" / "was", "me" / "us") is a change of meaning too. Contractions expand so
 * "what's" equals "what is". The lists cover English and, for the critical classes, the main European languages.
 */

const words = (s: string): ReadonlySet<string> => new Set(s.split(/\s+/).filter(Boolean));

export const NEGATIONS = words(`
  not no never none nobody nothing neither nor nowhere without except cannot unless hardly barely
  nicht kein keine keinen keinem keiner keines nie niemals nichts niemand ohne weder nirgends
  ne pas jamais rien aucun aucune sans ni non
  nunca jamás nada nadie ningún ninguna ninguno sin tampoco
  mai niente nulla nessuno nessuna senza né
  não ninguém nenhum nenhuma sem nem
  niet geen nooit niets zonder
  nie nigdy nic nikt żaden żadna bez
`);

/**
 * Modal verbs: what is required, allowed, advised or expected. "Users must reset" and "users can reset" ask about
 * different policies. (A request frame, "can you ..." at the start of a sentence, is not a modal: see `ASK_FRAME`.)
 */
export const MODALS = words(`
  can could may might must shall should will would ought
  muss musst müssen müsst kann kannst können könnt darf darfst dürfen dürft soll sollst sollen sollt sollte sollten
  wird werden würde würden möchte möchten mag
  doit doivent dois devons devez peut peuvent peux pouvons pouvez pourrait pourraient devrait devraient faut
  debe deben debo debemos puede pueden puedo podemos podría podrían debería deberían
  deve devono devo possono posso potrebbe potrebbero dovrebbe dovrebbero
  pode podem posso devem deveria poderia
  moet moeten mag mogen kan kunnen zou zullen
  musi może powinien powinna
`);

/** Comparisons and order in time: "more than", "less than", "before", "after" are different questions. */
export const COMPARISONS = words(`
  more less fewer most least better worse best worst higher lower larger smaller bigger greater cheaper faster slower
  longer shorter older newer younger earlier later before after above below over under exceeding
  mehr weniger meisten wenigsten größer kleiner höher niedriger früher später vor nach über unter besser schlechter
  plus moins avant après mieux pire
  más menos antes después mejor peor
  più meno prima dopo meglio peggio
  mais antes depois melhor pior
  meer minder beter slechter
`);

export const QUANTITIES = words(`
  zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
  eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion trillion
  dozen half quarter double triple twice thrice once single pair couple few several many much all every each any
  some both first second third fourth fifth sixth seventh eighth ninth tenth last next previous only percent per
  minimum maximum min max
  alle jeder jede jedes einige manche beide erste letzte nächste
  tous toutes chaque quelques premier première dernier dernière prochain
  todos todas cada algunos algunas primero primera último última próximo
  tutti tutte ogni alcuni primo prima ultimo ultima prossimo
`);

export const TIME_WORDS = words(`
  monday tuesday wednesday thursday friday saturday sunday january february march april june july august
  september october november december today tomorrow yesterday tonight morning afternoon evening night weekend week
  month year hour minute ago am pm daily weekly monthly yearly
  heute morgen gestern montag dienstag mittwoch donnerstag freitag samstag sonntag
  aujourd'hui demain hier lundi mardi mercredi jeudi vendredi samedi dimanche
  hoy mañana ayer lunes martes miércoles jueves viernes sábado domingo
  oggi domani ieri
`);

/** Words whose opposite is a different request: "flights to Paris" is not "flights from Paris". */
export const POLARITY = words(`
  yes true false on off enable disable enabled disabled increase decrease raise buy sell add remove delete create allow
  deny accept reject approve decline include exclude to from into onto up down open close start stop left right north
  south east west positive negative high low hot cold old new
`);

/**
 * Question words: "who" and "when" ask different things about the same subject. (German `was` and Italian `come`
 * are left out: they are English words too.)
 */
export const QUESTION_WORDS = words(`
  what which who whom whose how why when where whether
  wer wen wem wessen wann wo woher wohin warum wieso weshalb wie welche welcher welches
  qui quoi quand où pourquoi comment quel quelle quels quelles
  quién quiénes qué cuándo dónde cómo cuál cuáles cuánto cuántos
  chi cosa quando dove perché quale quali quanto
  quem quando onde porque como qual quais quanto
`);

/** Logic words: "unpaid AND overdue" is not "unpaid OR overdue"; "tell me if it rains" is not "tell me it rains". */
export const LOGIC = words(`or oder ou o oppure lub xor if`);

/** Words of courtesy and discourse: added or dropped, moved, they never change the request. */
export const FILLER = words(
  `please kindly just hi hello hey thanks thank ok okay well so also now really very quite actually simply <ask>`,
);

/** Articles and demonstratives: one may stand for another ("a list" / "the list", "this report" / "that report"). */
export const DETERMINERS = words(`a an the this that these those`);

/** First and second person and `it`: cheap to add or drop ("list them for me"); replaced, the person changes. */
export const PERSONAL = words(`i me my mine myself we us our ours ourselves you your yours yourself it its`);

/** Every pronoun: one replaced by another is a different person ("email him" / "email her"). */
export const PRONOUNS = words(`${[...PERSONAL].join(' ')} he him his himself she her hers herself they them their theirs themselves`);

/** Auxiliaries by tense: "who is the CEO" is not "who was the CEO". */
export const AUX_PRESENT = words(`is are be do does has have`);
export const AUX_PAST = words(`was were did had`);
/**
 * Auxiliaries may stand for one another of the same tense ("is" / "are"), never come or go: "why the contractor was
 * paid" is not "why the contractor paid" (the voice turns who paid around), "it is safe" is not "is it safe".
 */
export const AUXILIARIES = words(`${[...AUX_PRESENT, ...AUX_PAST].join(' ')} been being`);

export const PREPOSITIONS = words(`of in at for by with about as via within across through during`);

/** Function words: adding or dropping one barely changes a request. Modals, `or` and third persons are not among them. */
export const FUNCTION_WORDS = words(`
  ${[...FILLER, ...DETERMINERS, ...PERSONAL, ...AUX_PRESENT, ...AUX_PAST, ...PREPOSITIONS].join(' ')}
  and but then than there here such let lets been being
`);

/**
 * Function words that may replace one another: the same word as far as meaning goes. Any other replacement of one
 * function word by another (a preposition, a person, a tense) is a change of meaning.
 */
const EQUIVALENT: ReadonlyMap<string, string> = new Map([
  ...[...DETERMINERS].map((w) => [w, 'the'] as const),
  ...['is', 'are', 'be'].map((w) => [w, 'be'] as const),
  ['do', 'do'],
  ['does', 'do'],
  ['has', 'have'],
  ['have', 'have'],
  ['was', 'was'],
  ['were', 'was'],
]);

export function equivalentForm(word: string): string {
  return EQUIVALENT.get(word) ?? word;
}

/**
 * Request frames: "can you", "could you", "would you", "will you" opening a sentence ask for something; they are
 * politeness, not a modal ("could you list the files" = "list the files"). The tokenizer writes the modal of a frame
 * as `<ask>` (a filler word).
 */
export const ASK_FRAME = words(`can could would will`);
export const ASK_TOKEN = '<ask>';

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
  if (MODALS.has(word)) return 'modal';
  if (COMPARISONS.has(word)) return 'comparison';
  if (QUANTITIES.has(word)) return 'quantity';
  if (TIME_WORDS.has(word)) return 'time';
  if (QUESTION_WORDS.has(word)) return 'question word';
  if (LOGIC.has(word)) return 'logic word';
  if (POLARITY.has(word)) return 'polarity';
  if (word !== ASK_TOKEN && /^[^\p{L}\p{M}\p{N}]+$/u.test(word)) return 'symbol';
  return undefined;
}
