/**
 * Spelling variants: the same word spelled two known ways (British / American, old / new German orthography). A
 * variant is a *known pair*, never "close in letters": hyperglycemia / hypoglycemia, employee / employer, licensee /
 * licensor, aufsteigend / absteigend, Hannah / Hanna are a letter or two apart and mean different things. Each pair
 * is listed (or made from a listed stem and a known ending), and `spellingForm` maps every spelling to one form.
 */

const list = (s: string): string[] => s.split(/\s+/).filter(Boolean);

/** Stems spelled -ise / -ize (and -isation / -ization, -iser / -izer). */
const IZE = list(`
  organ real recogn summar priorit minim maxim optim custom categor apolog author capital central character critic
  emphas final general initial memor normal personal special standard symbol synchron util visual modern familiar
  global local item monet sanit serial token vector parametr random container virtual material neutral revolution
  sympath scrutin harmon hospital hypothes digit public penal legal stabil mobil fertil steril civil colon compartmental
  computer criminal democrat dramat econom energ equal external internal fantas formal fossil galvan human ideal
  immun industrial institution ion italic jeopard liberal magnet mechan mesmer metabol miniatur moral natural
  national operational ostrac pasteur patron philosoph plagiar polar popular pressur privat proselyt
  rational regular revital romantic satir scandal sensit social solemn subsid theor tranquil trivial
  tyrann urban vandal vapor verbal victim vital vocal western
`);

const IZE_ENDINGS: readonly [string, string][] = [
  ['ise', 'ize'],
  ['ised', 'ized'],
  ['ises', 'izes'],
  ['ising', 'izing'],
  ['isation', 'ization'],
  ['isations', 'izations'],
  ['iser', 'izer'],
  ['isers', 'izers'],
];

/** Stems spelled -yse / -yze. */
const YZE = list(`anal paral catal dial electrol hydrol`);
const YZE_ENDINGS: readonly [string, string][] = [
  ['yse', 'yze'],
  ['ysed', 'yzed'],
  ['ysing', 'yzing'],
  ['yser', 'yzer'],
];

/** Stems spelled -our / -or. */
const OUR = list(`
  col fav flav hon hum lab neighb behavi harb rum vap vig sav endeav arm od parl tum val clam cand ferv rig splend
  savi glam
`);
const OUR_ENDINGS: readonly [string, string][] = [
  ['our', 'or'],
  ['ours', 'ors'],
  ['oured', 'ored'],
  ['ouring', 'oring'],
  ['ourful', 'orful'],
  ['ourless', 'orless'],
  ['ourite', 'orite'],
  ['ourites', 'orites'],
  ['ourable', 'orable'],
  ['ourably', 'orably'],
  ['ourhood', 'orhood'],
  ['ourhoods', 'orhoods'],
  ['oural', 'oral'],
  ['ourist', 'orist'],
  ['ourists', 'orists'],
];

/** Stems spelled -re / -er. */
const RE = list(`cent met lit theat fib calib sab somb spect lust meag kilomet millimet centimet och scept mit`);
const RE_ENDINGS: readonly [string, string][] = [
  ['re', 'er'],
  ['res', 'ers'],
  ['red', 'ered'],
  ['ring', 'ering'],
];

/** Verbs ending in one l that British English doubles before -ed, -ing, -er (travelled / traveled). */
const LL = list(`
  travel cancel label model signal fuel level total channel counsel dial equal jewel marvel tunnel quarrel refuel pedal
  panel rival shovel snorkel swivel libel yodel enamel funnel grovel gravel initial marshal pencil barrel
`);
const LL_ENDINGS: readonly [string, string][] = [
  ['led', 'ed'],
  ['ling', 'ing'],
  ['ler', 'er'],
  ['lers', 'ers'],
  ['lor', 'or'],
  ['lors', 'ors'],
];

/**
 * Pairs that follow no ending rule: British (or old German) spelling first. Left out on purpose: cheque / check,
 * tyre / tire, kerb / curb, storey / story, tonne / ton (each American spelling is also another word or unit).
 */
const PAIRS = list(`
  grey:gray greys:grays greyed:grayed programme:program programmes:programs catalogue:catalog catalogues:catalogs
  dialogue:dialog dialogues:dialogs analogue:analog analogues:analogs monologue:monolog prologue:prolog
  defence:defense defences:defenses offence:offense offences:offenses licence:license licences:licenses
  pretence:pretense practise:practice practised:practiced practising:practicing aluminium:aluminum mould:mold
  moulds:molds mouldy:moldy moult:molt plough:plow sceptical:skeptical sceptic:skeptic scepticism:skepticism
  paediatric:pediatric paediatrician:pediatrician paediatrics:pediatrics anaesthesia:anesthesia
  anaesthetic:anesthetic haemoglobin:hemoglobin haemorrhage:hemorrhage oestrogen:estrogen encyclopaedia:encyclopedia
  manoeuvre:maneuver manoeuvres:maneuvers jewellery:jewelry enrol:enroll enrols:enrolls enrolment:enrollment
  fulfil:fulfill fulfils:fulfills fulfilment:fulfillment instalment:installment instalments:installments
  skilful:skillful wilful:willful judgement:judgment judgements:judgments acknowledgement:acknowledgment
  acknowledgements:acknowledgments ageing:aging whilst:while amongst:among towards:toward learnt:learned
  burnt:burned dreamt:dreamed leapt:leaped spoilt:spoiled pyjamas:pajamas cosy:cozy doughnut:donut artefact:artifact
  artefacts:artifacts sulphur:sulfur foetus:fetus oesophagus:esophagus diarrhoea:diarrhea leukaemia:leukemia
  anaemia:anemia anaemic:anemic orthopaedic:orthopedic gynaecology:gynecology haematology:hematology
  ischaemia:ischemia coeliac:celiac oedema:edema
  daß:dass muß:muss straße:strasse straßen:strassen groß:gross große:grosse fuß:fuss schließen:schliessen
  heißen:heissen grüße:grüsse maßnahme:massnahme maßnahmen:massnahmen
`).map((p) => p.split(':') as [string, string]);

function buildForms(): Map<string, string> {
  const forms = new Map<string, string>();
  const pair = (british: string, american: string): void => {
    if (british === american) return;
    forms.set(british, american);
    forms.set(american, american);
  };
  const stems = (list: readonly string[], endings: readonly [string, string][]): void => {
    for (const stem of list) for (const [gb, us] of endings) pair(stem + gb, stem + us);
  };
  stems(IZE, IZE_ENDINGS);
  stems(YZE, YZE_ENDINGS);
  stems(OUR, OUR_ENDINGS);
  stems(RE, RE_ENDINGS);
  stems(LL, LL_ENDINGS);
  for (const [gb, us] of PAIRS) pair(gb, us);
  return forms;
}

const FORMS = buildForms();

/** The one form every known spelling of `word` maps to (the word itself when it has no listed variant). */
export function spellingForm(word: string): string {
  return FORMS.get(word) ?? word;
}

/** Two known spellings of the same word ("summarise" / "summarize", "centre" / "center"); never "close in letters". */
export function isVariant(a: string, b: string): boolean {
  return a !== b && FORMS.has(a) && FORMS.get(a) === FORMS.get(b);
}
