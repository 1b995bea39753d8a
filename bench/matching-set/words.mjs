// Adversarial families where one word (or a few) changes what is asked: modal verbs, comparisons, words a letter or
// two apart, antonyms, negations, numbers and quantities, persons / prepositions / tenses, German one-word changes,
// CJK one-character changes, look-alike entities. Each item is two texts; `build.mjs` asks them both ways round.
import { item, slot, swap } from './build.mjs';

const T = (lang, domain, template, note) => item(lang, domain, swap(template), note);

// ---- modal verbs: what is required, allowed, advised or expected ----
const MODAL_PAIRS_EN = [
  ['must', 'can'],
  ['must', 'may'],
  ['must', 'should'],
  ['must', 'will'],
  ['must', 'might'],
  ['can', 'should'],
  ['can', 'will'],
  ['can', 'might'],
  ['may', 'should'],
  ['may', 'will'],
  ['should', 'will'],
  ['should', 'might'],
  ['will', 'might'],
];
const MODAL_EN = [
  ['hr', 'Employees {} submit expense reports within 30 days of travel. Summarize what this means for the team.'],
  ['support', 'Users {} reset their password every 90 days. Explain the policy.'],
  ['law', 'The tenant {} sublet the apartment with written consent from the landlord. What does this clause mean?'],
  ['medicine', 'Patients {} take this medication with food. Explain the instructions to the family.'],
  ['retail', 'Refunds {} be issued after the returned item is inspected. Draft a reply to the customer.'],
  ['coding', 'The function {} return null when the input list is empty. Write the docstring for it.'],
  ['travel', 'Travellers {} carry a valid passport on this route. What documents should they prepare?'],
  ['finance', 'The company {} report quarterly earnings to the regulator. Summarize the obligation.'],
  ['support', 'Admins {} delete archived projects after one year. Write the help-center note.'],
  ['law', 'The supplier {} terminate the contract with 30 days of notice. Explain the risk for us.'],
  ['medicine', 'Nurses {} double-check the dose before giving insulin. Draft the ward instruction.'],
  ['hr', 'Managers {} approve overtime in advance. Write the policy paragraph.'],
];
const MODAL_OTHER = [
  ['de', 'hr', 'Mitarbeiter {} Reisekosten innerhalb von 30 Tagen einreichen. Erkläre die Regel.', 'pl'],
  ['de', 'support', 'Nutzer {} ihr Passwort alle 90 Tage ändern. Erkläre die Richtlinie.', 'pl'],
  ['de', 'law', 'Der Mieter {} die Wohnung nur mit Zustimmung untervermieten. Was bedeutet die Klausel?', 'sg'],
  ['de', 'medicine', 'Der Patient {} das Medikament mit dem Essen einnehmen. Erkläre die Anweisung.', 'sg'],
  ['de', 'coding', 'Die Funktion {} bei einer leeren Liste null zurückgeben. Schreibe die Dokumentation.', 'sg'],
  ['de', 'finance', 'Die Firma {} den Bericht jedes Quartal veröffentlichen. Fasse die Pflicht zusammen.', 'sg'],
  ['fr', 'hr', 'Les employés {} soumettre leurs notes de frais sous 30 jours. Explique la règle.', 'pl'],
  ['fr', 'support', 'Les utilisateurs {} changer leur mot de passe tous les 90 jours. Explique la politique.', 'pl'],
  ['fr', 'law', 'Le locataire {} sous-louer le logement avec l’accord écrit du propriétaire. Que signifie la clause ?', 'sg'],
  ['fr', 'medicine', 'Le patient {} prendre ce médicament pendant le repas. Explique la consigne.', 'sg'],
  ['es', 'hr', 'Los empleados {} presentar los gastos de viaje en 30 días. Explica la norma.', 'pl'],
  ['es', 'support', 'Los usuarios {} cambiar su contraseña cada 90 días. Explica la política.', 'pl'],
  ['es', 'law', 'El inquilino {} subarrendar el piso con permiso escrito del propietario. ¿Qué significa la cláusula?', 'sg'],
  ['es', 'medicine', 'El paciente {} tomar este medicamento con comida. Explica la indicación.', 'sg'],
  ['it', 'support', 'Gli utenti {} cambiare la password ogni 90 giorni. Spiega la regola.', 'pl'],
  ['it', 'law', 'L’inquilino {} subaffittare l’appartamento con il consenso scritto. Cosa significa la clausola?', 'sg'],
  ['pt', 'support', 'Os usuários {} trocar a senha a cada 90 dias. Explique a política.', 'pl'],
  ['nl', 'support', 'Gebruikers {} hun wachtwoord elke 90 dagen wijzigen. Leg het beleid uit.', 'pl'],
];
const MODAL_PAIRS = {
  de: {
    pl: [
      ['müssen', 'können'],
      ['müssen', 'sollten'],
      ['dürfen', 'müssen'],
      ['können', 'sollten'],
    ],
    sg: [
      ['muss', 'kann'],
      ['darf', 'muss'],
      ['soll', 'kann'],
      ['muss', 'sollte'],
    ],
  },
  fr: {
    pl: [
      ['doivent', 'peuvent'],
      ['doivent', 'devraient'],
      ['peuvent', 'devraient'],
    ],
    sg: [
      ['doit', 'peut'],
      ['doit', 'devrait'],
      ['peut', 'devrait'],
    ],
  },
  es: {
    pl: [
      ['deben', 'pueden'],
      ['deben', 'deberían'],
      ['pueden', 'deberían'],
    ],
    sg: [
      ['debe', 'puede'],
      ['debe', 'debería'],
      ['puede', 'debería'],
    ],
  },
  it: {
    pl: [
      ['devono', 'possono'],
      ['devono', 'dovrebbero'],
      ['possono', 'dovrebbero'],
    ],
    sg: [
      ['deve', 'può'],
      ['deve', 'dovrebbe'],
      ['può', 'dovrebbe'],
    ],
  },
  pt: {
    pl: [
      ['devem', 'podem'],
      ['devem', 'deveriam'],
      ['podem', 'deveriam'],
    ],
  },
  nl: {
    pl: [
      ['moeten', 'kunnen'],
      ['moeten', 'mogen'],
      ['kunnen', 'zullen'],
    ],
  },
};

export function modalItems() {
  const out = [];
  MODAL_EN.forEach(([domain, template], t) => {
    for (let k = 0; k < 4; k++) {
      const pair = MODAL_PAIRS_EN[(t * 4 + k) % MODAL_PAIRS_EN.length];
      out.push(item('en', domain, slot(template, [pair])[0], `${pair[0]} / ${pair[1]}`));
    }
  });
  for (const [lang, domain, template, number] of MODAL_OTHER)
    for (const pair of MODAL_PAIRS[lang][number]) out.push(item(lang, domain, slot(template, [pair])[0], `${pair[0]} / ${pair[1]}`));
  return out;
}

// ---- comparisons and order in time ----
const COMPARISON = [
  ['retail', 'Show customers who spent {more|less} than $500 in the last month.'],
  ['finance', 'List the invoices that are {more|less} than 60 days overdue.'],
  ['travel', 'Find flights that depart {before|after} 9 am on Friday from the main airport.'],
  ['support', 'Which tickets were opened {before|after} the outage started?'],
  ['finance', 'Is the new plan {cheaper|more expensive} than the current one for a team of five?'],
  ['coding', 'Why is the second query {faster|slower} than the first one on the same table?'],
  ['medicine', 'Is a resting heart rate {above|below} 100 a reason to call the doctor?'],
  ['hr', 'List the employees who joined {earlier|later} than the new manager.'],
  ['finance', 'Which funds had {higher|lower} returns than the index last year?'],
  ['retail', 'Show the laptops that are {lighter|heavier} than two kilograms.'],
  ['travel', 'Which hotels are {closer to|farther from} the conference center than the station?'],
  ['coding', 'Should the cache be {larger|smaller} than the working set for this service?'],
  ['support', 'Does the {newer|older} version of the app support offline mode?'],
  ['law', 'Can the notice period be {longer|shorter} than the one in the statute?'],
  ['medicine', 'Should the dose be {increased|decreased} for patients over 65?'],
  ['finance', 'Did revenue grow {faster|slower} than costs in the third quarter?'],
  ['hr', 'Is the salary offer {above|below} the market median for this role?'],
  ['retail', 'Do you have this jacket in a {bigger|smaller} size than medium?'],
  ['travel', 'Is the train {quicker|slower} than the bus between Lyon and Geneva?'],
  ['support', 'Why does the dashboard show {more|fewer} active users than last week?'],
  ['finance', 'Explain why the loan costs {more|less} over ten years than over five.'],
  ['coding', 'Sort the results so that the {newest|oldest} entries come first.'],
  ['medicine', 'Is the risk {higher|lower} for patients who smoke?'],
  ['law', 'Does the clause apply {before|after} the contract is signed?'],
  ['retail', 'Show me phones with at {least|most} 128 GB of storage.'],
  ['hr', 'Can employees take {more|less} than ten days of leave in a row?'],
  ['travel', 'Book the {earliest|latest} train to Milan that still has seats.'],
  ['finance', 'Is inflation expected to be {higher|lower} next year than this year?'],
  ['support', 'Are the response times {better|worse} since the last release?'],
  ['coding', 'Is the timeout {longer|shorter} than the retry interval in this config?'],
  ['retail', 'Which of these two blenders is {louder|quieter} at full speed?'],
  ['finance', 'Did the company spend {over|under} budget on marketing this year?'],
];
const COMPARISON_OTHER = [
  ['de', 'retail', 'Zeige Kunden, die {mehr|weniger} als 500 Euro ausgegeben haben.'],
  ['de', 'travel', 'Welche Flüge starten {vor|nach} 9 Uhr am Freitag?'],
  ['de', 'finance', 'Ist der neue Tarif {billiger|teurer} als der alte?'],
  ['de', 'coding', 'Warum ist die zweite Abfrage {schneller|langsamer} als die erste?'],
  ['de', 'finance', 'Liste die Rechnungen, die {älter|jünger} als 60 Tage sind.'],
  ['de', 'medicine', 'Ist das Risiko für Raucher {höher|niedriger}?'],
  ['fr', 'retail', 'Montre les clients qui ont dépensé {plus|moins} de 500 euros.'],
  ['fr', 'travel', 'Quels vols partent {avant|après} 9 heures vendredi ?'],
  ['fr', 'finance', 'Le nouveau forfait est-il {moins|plus} cher que l’ancien ?'],
  ['fr', 'coding', 'Pourquoi la deuxième requête est-elle plus {rapide|lente} que la première ?'],
  ['es', 'retail', 'Muestra los clientes que gastaron {más|menos} de 500 euros.'],
  ['es', 'travel', '¿Qué vuelos salen {antes|después} de las 9 el viernes?'],
  ['es', 'finance', '¿Es el nuevo plan {más|menos} caro que el actual?'],
  ['es', 'medicine', '¿Es el riesgo {mayor|menor} para los fumadores?'],
  ['it', 'retail', 'Mostra i clienti che hanno speso {più|meno} di 500 euro.'],
  ['it', 'travel', 'Quali voli partono {prima|dopo} delle 9 di venerdì?'],
  ['pt', 'retail', 'Mostre os clientes que gastaram {mais|menos} de 500 euros.'],
  ['nl', 'retail', 'Toon klanten die {meer|minder} dan 500 euro hebben uitgegeven.'],
];

export function comparisonItems() {
  return [...COMPARISON.map(([d, t]) => T('en', d, t)), ...COMPARISON_OTHER.map(([l, d, t]) => T(l, d, t))];
}

// ---- words a letter or two apart: never spelling variants ----
const LETTERS = [
  ['medicine', 'Explain why patients with {hyperglycemia|hypoglycemia} feel shaky and confused.'],
  ['medicine', 'What are the first-line treatments for {hypertension|hypotension} in older adults?'],
  ['medicine', 'List the symptoms of {hyperthyroidism|hypothyroidism} in teenagers.'],
  ['medicine', 'How is {hyperkalemia|hypokalemia} managed in the emergency department?'],
  ['medicine', 'What causes {hypernatremia|hyponatremia} after surgery?'],
  ['medicine', 'Can {Celebrex|Celexa} be taken together with ibuprofen?'],
  ['medicine', 'What is the usual starting dose of {Zantac|Xanax} for adults?'],
  ['medicine', 'Is {Lamictal|Lamisil} safe during pregnancy?'],
  ['medicine', 'What are the side effects of {hydroxyzine|hydralazine} in the elderly?'],
  ['law', 'Summarize the obligations of the {licensee|licensor} under section 4.'],
  ['law', 'What rights does the {lessee|lessor} have if the equipment breaks?'],
  ['law', 'Which taxes does the {employee|employer} pay on this bonus?'],
  ['law', 'Can the {mortgagee|mortgagor} sell the property before the loan is repaid?'],
  ['law', 'Explain the duties of the {assignee|assignor} in this agreement.'],
  ['law', 'What happens if the {grantee|grantor} dies before the transfer?'],
  ['law', 'Who is the {appellant|appellee} in this case and what did they argue?'],
  ['finance', 'Who is the {payee|payer} on this cheque and when was it issued?'],
  ['finance', 'Explain how {inflation|deflation} affects fixed-rate mortgages.'],
  ['finance', 'What are the rules for {intrastate|interstate} trucking permits?'],
  ['retail', 'How do I {import|export} my contacts to the new phone?'],
  ['support', 'Why is the {inbound|outbound} mail queue growing so fast?'],
  ['support', 'Show the {uptime|downtime} report for the payment service.'],
  ['coding', 'Sort the table in {ascending|descending} order by created date.'],
  ['coding', 'How do I {encrypt|decrypt} the backup with the new key?'],
  ['coding', 'Write a function to {encode|decode} the payload as base64.'],
  ['coding', 'How do I {install|uninstall} the package without root access?'],
  ['coding', 'Why does the script {mount|unmount} the volume twice?'],
  ['coding', 'Show only the {active|inactive} users in the admin list.'],
  ['coding', 'Is this input {valid|invalid} according to the schema?'],
  ['hr', 'Is it {legal|illegal} to ask about age in an interview?'],
  ['support', 'Why is the save button {visible|invisible} on mobile?'],
  ['retail', 'Is the discount {likely|unlikely} to return next month?'],
  ['law', 'Does this change the {principal|principle} of the agreement?'],
  ['finance', 'How do rate changes {affect|effect} the bond portfolio?'],
  ['support', 'Are {discrete|discreet} notifications supported on the lock screen?'],
  ['retail', 'Order more {stationary|stationery} for the front desk.'],
  ['hr', 'Email {Hannah|Hanna} about the onboarding schedule for Monday.'],
  ['hr', '{Hannah|Hanna} asked for the onboarding schedule. Send it today.'],
  ['support', 'Reset the password for {bob.smith|bob.smyth} on the mail server.'],
  ['support', 'Send the invoice to {bob.smith@example.com|bob.smyth@example.com} today.'],
  ['hr', 'Book a meeting room for {Jon|John} and the design team.'],
  ['hr', 'Add {Sara|Sarah} to the payroll list for next month.'],
  ['hr', 'Set up a laptop for {Eric|Erik} from the sales team.'],
  ['hr', 'Forward the contract to {Catherine|Katherine} in legal.'],
  ['hr', 'Is {Steven|Stephen} on vacation next week?'],
  ['support', 'Grant admin rights to the user {jsmith|jsmyth} on the staging server.'],
  ['coding', 'Clone the {tapedeck|tapedesk} repository and run the tests.'],
  ['travel', 'Book a flight to {Austria|Australia} for the conference in spring.'],
  ['travel', 'What is the weather like in {Malta|Yalta} in October?'],
  ['finance', 'What is the current price of {AAPL|APPL} stock?'],
  ['retail', 'Is the {cheaper|cheapest} model good enough for video editing?'],
  ['coding', 'Should I use {await|async} in this function?'],
];
const LETTERS_OTHER = [
  ['de', 'coding', 'Sortiere die Liste {aufsteigend|absteigend} nach dem Datum der Bestellung.'],
  ['de', 'law', 'Welche Pflichten hat der {Mieter|Vermieter} bei einem Wasserschaden?'],
  ['de', 'retail', 'Welche Rechte hat der {Käufer|Verkäufer} bei einem Mangel?'],
  ['de', 'support', 'Wie kann ich die Benachrichtigungen {einschalten|ausschalten}?'],
  ['de', 'hr', 'Wann darf der {Arbeitnehmer|Arbeitgeber} den Vertrag kündigen?'],
  ['de', 'medicine', 'Was sind die Symptome einer {Hyperglykämie|Hypoglykämie}?'],
  ['de', 'medicine', 'Wie behandelt man eine {Hypertonie|Hypotonie} bei älteren Patienten?'],
  ['de', 'finance', 'Soll ich das Geld {einzahlen|auszahlen} lassen?'],
  ['fr', 'medicine', 'Quels sont les symptômes de l’{hyperglycémie|hypoglycémie} ?'],
  ['fr', 'coding', 'Trie la liste par ordre {croissant|décroissant}.'],
  ['fr', 'law', 'Le {locataire|locateur} doit-il payer la réparation ?'],
  ['es', 'coding', 'Ordena la lista de forma {ascendente|descendente} por fecha.'],
  ['es', 'medicine', '¿Cuáles son los síntomas de la {hiperglucemia|hipoglucemia}?'],
  ['es', 'law', '¿Qué derechos tiene el {arrendador|arrendatario} si se rompe la caldera?'],
  ['it', 'medicine', 'Quali sono i sintomi dell’{iperglicemia|ipoglicemia}?'],
  ['pt', 'medicine', 'Quais são os sintomas da {hiperglicemia|hipoglicemia}?'],
];

export function letterItems() {
  return [...LETTERS.map(([d, t]) => T('en', d, t)), ...LETTERS_OTHER.map(([l, d, t]) => T(l, d, t))];
}

// ---- antonyms outside the polarity list ----
const ANTONYMS = [
  ['support', 'How do I {upload|download} the report from the shared drive?'],
  ['coding', 'Write a script to {compress|decompress} the log files every night.'],
  ['law', 'Does the policy {permit|forbid} remote work from abroad?'],
  ['finance', 'How can we {maximize|minimize} the tax on the bonus payment?'],
  ['finance', 'Should I {borrow|lend} money to the subsidiary at this rate?'],
  ['support', 'Why did the nightly build {pass|fail} on the main branch?'],
  ['hr', 'Should we {hire|fire} a contractor for the migration project?'],
  ['coding', 'Is the repository {public|private} on the company account?'],
  ['coding', 'Route the {internal|external} traffic through the new gateway.'],
  ['coding', 'How do I {push|pull} the latest changes of the feature branch?'],
  ['coding', 'Why can I not {lock|unlock} the file in the editor?'],
  ['coding', 'Mark the field as {required|optional} in the signup form.'],
  ['travel', 'What time does the train {arrive|depart} at the central station?'],
  ['finance', 'Record the transfer as a {credit|debit} on the customer account.'],
  ['finance', 'Classify the payment as {income|expense} in the ledger.'],
  ['finance', 'Is the lease an {asset|liability} on the balance sheet?'],
  ['finance', 'Did the store make a {profit|loss} in December?'],
  ['finance', 'How do I {deposit|withdraw} cash at a partner bank?'],
  ['coding', 'Should the sidebar {expand|collapse} when the page loads?'],
  ['coding', 'How do I {attach|detach} the disk from the virtual machine?'],
  ['coding', 'Should we {merge|split} the billing and invoicing services?'],
  ['support', 'How do I {join|leave} the team workspace?'],
  ['hr', 'On what grounds can we {promote|demote} an employee mid-year?'],
  ['retail', 'Do customers {like|dislike} the new checkout page?'],
  ['law', 'Did the court {grant|refuse} the motion?'],
  ['medicine', 'Should the patient {inhale|exhale} slowly during the test?'],
  ['retail', 'Is the bottle {full|empty} when it ships?'],
  ['travel', 'Is the hotel room {quiet|noisy} at night?'],
  ['coding', 'Is the function {synchronous|asynchronous} in the new SDK?'],
  ['support', 'Is the feature {free|paid} on the starter plan?'],
  ['law', 'What must the {landlord|tenant} repair under this lease?'],
  ['retail', 'Who pays for shipping, the {buyer|seller} or the platform?'],
  ['medicine', 'Is the {doctor|patient} allowed to see the full record?'],
  ['hr', 'Can the {teacher|student} change the grade after the deadline?'],
  ['coding', 'Does the {client|server} validate the token?'],
  ['coding', 'Promote the {primary|replica} database during the failover.'],
  ['travel', 'Is the {sunrise|sunset} visible from the north beach?'],
  ['finance', 'Is the {bid|ask} price shown in the top row?'],
  ['coding', 'Use a {shallow|deep} copy of the config object.'],
  ['coding', 'Should the tests run in {strict|lenient} mode?'],
  ['retail', 'Do you sell {wide|narrow} fit running shoes?'],
  ['medicine', 'Is the wound {clean|dirty} enough to close today?'],
  ['support', 'Why is the chart {empty|full} after the import?'],
  ['finance', 'Should we {buy|rent} the office building?'],
  ['travel', 'Is the museum {crowded|empty} on weekday mornings?'],
  ['coding', 'Should the parser be {eager|lazy} about loading modules?'],
  ['retail', 'Is the sofa {soft|firm} enough for daily use?'],
  ['support', 'Is the backup {encrypted|plaintext} on the server?'],
];
const ANTONYMS_OTHER = [
  ['de', 'support', 'Wie kann ich die Datei {hochladen|herunterladen}?'],
  ['de', 'finance', 'Soll ich das Konto {eröffnen|auflösen}?'],
  ['de', 'finance', 'Hat die Firma im Dezember {Gewinn|Verlust} gemacht?'],
  ['de', 'finance', 'Zeige die {Einnahmen|Ausgaben} des letzten Quartals.'],
  ['de', 'support', 'Ist das Fenster im Büro {offen|geschlossen}?'],
  ['de', 'coding', 'Soll die Seitenleiste beim Laden {ausklappen|einklappen}?'],
  ['de', 'retail', 'Wer zahlt den Versand, der {Käufer|Verkäufer} oder die Plattform?'],
  ['de', 'finance', 'Sollen wir die Aktien jetzt {kaufen|verkaufen}?'],
  ['fr', 'support', 'Comment {télécharger|téléverser} le rapport sur le serveur ?'],
  ['fr', 'finance', 'Le magasin a-t-il fait un {bénéfice|déficit} en décembre ?'],
  ['fr', 'finance', 'Faut-il {acheter|vendre} les actions maintenant ?'],
  ['fr', 'support', 'La fenêtre du bureau est-elle {ouverte|fermée} ?'],
  ['fr', 'retail', 'Qui paie la livraison, l’{acheteur|vendeur} ou la plateforme ?'],
  ['es', 'support', '¿Cómo {subo|bajo} el informe a la carpeta compartida?'],
  ['es', 'finance', '¿Debo {comprar|vender} las acciones ahora?'],
  ['es', 'finance', '¿La tienda tuvo {ganancias|pérdidas} en diciembre?'],
  ['es', 'support', '¿La ventana de la oficina está {abierta|cerrada}?'],
  ['es', 'retail', '¿Quién paga el envío, el {comprador|vendedor} o la plataforma?'],
  ['it', 'finance', 'Devo {comprare|vendere} le azioni adesso?'],
  ['it', 'support', 'La finestra dell’ufficio è {aperta|chiusa}?'],
  ['pt', 'finance', 'Devo {comprar|vender} as ações agora?'],
  ['nl', 'finance', 'Moet ik de aandelen nu {kopen|verkopen}?'],
];

export function antonymItems() {
  return [...ANTONYMS.map(([d, t]) => T('en', d, t)), ...ANTONYMS_OTHER.map(([l, d, t]) => T(l, d, t))];
}

// ---- negation, in ten languages ----
const NEGATION = [
  ['en', 'travel', '{Is it|Is it not} safe to drink the tap water in Lisbon?'],
  ['en', 'finance', '{Include|Do not include} the appendix in the summary for the board.'],
  ['en', 'medicine', 'The patient {has|has no} history of heart disease. Summarize the case.'],
  ['en', 'retail', "I {want|don't want} the refund sent to my old card."],
  ['en', 'support', 'Show the orders {with|without} a tracking number.'],
  ['en', 'law', 'The tenant {can|cannot} keep pets in the flat. Explain the clause.'],
  ['en', 'finance', '{Always|Never} retry the payment when the card is declined.'],
  ['en', 'finance', 'Customers who {have|have not} paid by Friday get a reminder. Draft it.'],
  ['en', 'coding', 'The build {passed|did not pass} on the main branch. What changed?'],
  ['en', 'hr', 'List the employees who {are|are not} eligible for the bonus.'],
  ['en', 'medicine', 'Should the patient {take|never take} the tablets on an empty stomach?'],
  ['en', 'support', '{Notify|Do not notify} the customer when the ticket is closed.'],
  ['de', 'travel', 'Ist das Leitungswasser in Lissabon {sicher|nicht sicher}?'],
  ['de', 'medicine', 'Der Patient hat {eine|keine} Vorgeschichte mit Herzproblemen.'],
  ['de', 'support', 'Zeige die Bestellungen {mit|ohne} Sendungsnummer.'],
  ['de', 'retail', 'Ich möchte die Erstattung {nicht |}auf meine alte Karte.'],
  ['fr', 'travel', 'L’eau du robinet {est|n’est pas} potable à Lisbonne ?'],
  ['fr', 'support', 'Montre les commandes {avec|sans} numéro de suivi.'],
  ['fr', 'medicine', 'Le patient {a|n’a pas} d’antécédents cardiaques.'],
  ['es', 'travel', '¿El agua del grifo {es|no es} segura en Lisboa?'],
  ['es', 'support', 'Muestra los pedidos {con|sin} número de seguimiento.'],
  ['es', 'medicine', 'El paciente {tiene|no tiene} antecedentes cardíacos.'],
  ['it', 'travel', 'L’acqua del rubinetto {è|non è} potabile a Lisbona?'],
  ['it', 'support', 'Mostra gli ordini {con|senza} numero di tracciamento.'],
  ['pt', 'travel', 'A água da torneira {é|não é} potável em Lisboa?'],
  ['pt', 'support', 'Mostre os pedidos {com|sem} código de rastreio.'],
  ['nl', 'travel', 'Is het kraanwater in Lissabon {veilig|niet veilig}?'],
  ['nl', 'support', 'Toon de bestellingen {met|zonder} trackingnummer.'],
  ['pl', 'travel', 'Czy woda z kranu w Lizbonie {jest|nie jest} bezpieczna?'],
  ['pl', 'support', 'Pokaż zamówienia {z numerem|bez numeru} przesyłki.'],
  ['ja', 'travel', '東京の水道水は{飲めます|飲めません}か？'],
  ['ja', 'support', '追跡番号{のある|のない}注文を表示してください。'],
  ['zh', 'travel', '里斯本的自来水{可以|不可以}直接喝吗？'],
  ['zh', 'support', '显示{有|没有}快递单号的订单。'],
  ['ko', 'travel', '리스본 수돗물은 마셔도 {됩니까|안 됩니까}?'],
];

export function negationItems() {
  return NEGATION.map(([l, d, t]) => T(l, d, t));
}

// ---- numbers, dates, quantities, time words, question words ----
const FACTS = [
  ['en', 'retail', 'Book a table for {4|5} people at 7 pm on the terrace.'],
  ['en', 'support', 'What happened on {2024-05-01|2024-05-02} in the payment logs?'],
  ['en', 'retail', 'List {three|five} colors used in the logo.'],
  ['en', 'support', 'Summarize {all|some} open issues in the tracker.'],
  ['en', 'hr', 'Schedule the review for {monday|tuesday} morning.'],
  ['en', 'travel', '{When|Why} was the Eiffel Tower built?'],
  ['en', 'retail', 'Refund {half|all} of the order total to the customer.'],
  ['en', 'coding', 'Show the {first|last} ten rows of the export.'],
  ['en', 'finance', 'Transfer ${250|2500} to the savings account.'],
  ['en', 'coding', 'Increase the timeout to {30|300} seconds.'],
  ['en', 'hr', 'Set the alarm for {7:30|8:30} tomorrow.'],
  ['en', 'retail', 'Ship the order {today|tomorrow} by express.'],
  ['en', 'law', '{Who|Where} signed the contract for the new office?'],
  ['en', 'finance', 'Compare the {2023|2024} results with the forecast.'],
  ['en', 'hr', 'Is the meeting at {10|11} in room 4?'],
  ['en', 'coding', 'Give me {one|two} examples of a closure in JavaScript.'],
  ['en', 'medicine', 'Give {5|50} mg of the drug every morning.'],
  ['en', 'finance', 'What is the interest on {€10,000|€100,000} over five years?'],
  ['en', 'travel', 'Book {two|three} nights at the hotel near the station.'],
  ['en', 'support', '{How|Why} did the customer cancel the subscription?'],
  ['en', 'hr', 'Pay the bonus {monthly|yearly} to the sales team.'],
  ['en', 'retail', 'Apply a {10%|15%} discount to the winter jackets.'],
  ['de', 'retail', 'Reserviere einen Tisch für {4|5} Personen.'],
  ['de', 'travel', '{Wann|Warum} wurde der Eiffelturm gebaut?'],
  ['de', 'hr', 'Plane das Gespräch für {Montag|Dienstag} früh.'],
  ['fr', 'retail', 'Réserve une table pour {4|5} personnes.'],
  ['fr', 'travel', '{Quand|Pourquoi} la tour Eiffel a-t-elle été construite ?'],
  ['fr', 'hr', 'Planifie l’entretien pour {lundi|mardi} matin.'],
  ['es', 'retail', 'Reserva una mesa para {4|5} personas.'],
  ['es', 'travel', '¿{Cuándo|Dónde} se construyó la Torre Eiffel?'],
  ['es', 'hr', 'Programa la reunión para el {lunes|martes} por la mañana.'],
  ['it', 'retail', 'Prenota un tavolo per {4|5} persone.'],
  ['pt', 'retail', 'Reserve uma mesa para {4|5} pessoas.'],
  ['nl', 'retail', 'Reserveer een tafel voor {4|5} personen.'],
  ['pl', 'retail', 'Zarezerwuj stolik dla {4|5} osób.'],
  ['ja', 'retail', '{3|4}名で予約をお願いします。'],
  ['zh', 'retail', '请帮我预订{4|5}个人的位子。'],
];

export function factItems() {
  return FACTS.map(([l, d, t]) => T(l, d, t));
}

// ---- persons, prepositions, tenses: function words of different kinds ----
const FUNCTION_SWAPS = [
  ['hr', 'Email {him|her} the signed contract before noon.'],
  ['finance', 'Send {my|our} quarterly report to the auditors.'],
  ['retail', 'Book {me|us} a table for Friday evening.'],
  ['finance', 'Summarize the report written {by|for} the finance team.'],
  ['law', 'Who {is|was} the chief executive of the company?'],
  ['finance', 'What {is|was} the revenue of the retail division?'],
  ['coding', 'How {does|did} the scheduler assign the shifts?'],
  ['law', 'The contract {has|had} a termination clause. Explain it.'],
  ['support', 'Arrange a call {with|for} the supplier next week.'],
  ['hr', 'Are {they|we} allowed to use the staging database?'],
  ['hr', 'Did {he|she} approve the expense report?'],
  ['support', 'Tell {them|him} the release is delayed.'],
  ['retail', 'Is this gift card {mine|yours} or from the promotion?'],
  ['finance', 'Which accounts {are|were} overdrawn in March?'],
  ['coding', 'Which tests {fail|failed} on the release branch?'],
  ['travel', 'Book a room with breakfast for {me|us}.'],
  ['hr', 'Write a reference letter {for|about} the intern.'],
  ['law', 'Does the clause protect {the buyer|us} against late delivery?'],
  ['finance', 'Explain why the contractor {was paid|paid} before the inspection of the roof.'],
  ['hr', 'The new hire {was trained|trained} by the team lead during the first week.'],
  ['travel', 'Tell me {if|that} it rains in Lisbon during the conference week.'],
  ['support', 'Find out {whether|that} the supplier shipped the parts on Monday.'],
  ['support', '{It is|Is it} safe to restart the payment server during business hours?'],
  ['finance', 'The invoice {has been approved|has approved} by the finance team this morning.'],
];

export function functionSwapItems() {
  return FUNCTION_SWAPS.map(([d, t]) => T('en', d, t));
}

// ---- German: one word changed ----
const GERMAN = [
  ['retail', 'Kündige das Abonnement {heute|morgen}.'],
  ['retail', 'Ich möchte {zwei|drei} Tickets für das Konzert am Samstag.'],
  ['retail', 'Ist die Apotheke am Sonntag {geöffnet|geschlossen}?'],
  ['finance', 'Die Rechnung ist {bezahlt|offen}. Schreibe dem Kunden.'],
  ['support', 'Schalte das Licht im Flur {an|aus}.'],
  ['retail', 'Der Kunde hat das Paket {erhalten|verloren}. Was nun?'],
  ['travel', 'Ist die Straße nach Innsbruck {frei|gesperrt}?'],
  ['travel', 'Buche ein {Einzelzimmer|Doppelzimmer} für drei Nächte.'],
  ['finance', 'Die Zinsen sollen {steigen|sinken}. Was bedeutet das für uns?'],
  ['finance', 'Wir {kaufen|verkaufen} die Aktien im Juni.'],
  ['law', 'Der Vertrag wurde {verlängert|gekündigt}. Was folgt daraus?'],
  ['medicine', 'Das Medikament wird {morgens|abends} eingenommen.'],
  ['travel', 'Der Flug nach Wien ist {pünktlich|verspätet}.'],
  ['coding', 'Die Datei ist {verschlüsselt|unverschlüsselt} gespeichert.'],
  ['finance', '{Erhöhe|Senke} das Budget um zehn Prozent.'],
  ['hr', 'Die Besprechung findet {vor|nach} der Mittagspause statt.'],
  ['retail', 'Das Paket wurde {zugestellt|zurückgeschickt}.'],
  ['travel', 'Ist der Parkplatz am Hotel {kostenlos|kostenpflichtig}?'],
  ['coding', 'Zeige die {aktiven|inaktiven} Benutzer im Admin-Bereich.'],
  ['coding', 'Der Server läuft seit dem Update {stabil|instabil}.'],
  ['law', 'Ist das Angebot noch {gültig|ungültig}?'],
  ['hr', 'Der Antrag auf Elternzeit wurde {genehmigt|abgelehnt}.'],
  ['support', 'Die Heizung im Büro ist {kaputt|repariert}.'],
  ['hr', 'Sende die Einladung an {Anna|Anne} aus dem Vertrieb.'],
  ['support', 'Bitte {öffne|schließe} das Ticket für den Kunden.'],
  ['retail', 'Ist das Menü im Restaurant {vegetarisch|vegan}?'],
  ['hr', 'Der Kurs beginnt {montags|dienstags} um neun.'],
  ['retail', 'Die Lieferung kommt {mit|ohne} Rechnung.'],
  ['travel', 'Die Wohnung hat {einen|keinen} Balkon.'],
  ['coding', 'Soll ich die Datei {speichern|löschen}?'],
  ['law', 'Die Frist endet {heute|morgen} um Mitternacht.'],
  ['support', 'Ist der Aufzug im Gebäude {defekt|repariert}?'],
  ['finance', 'Die Zahlung ist {eingegangen|ausgeblieben}.'],
  ['hr', 'Er hat die Probezeit {bestanden|nicht bestanden}.'],
  ['finance', 'Die Preise sind im Mai {gestiegen|gefallen}.'],
  ['travel', 'Biege an der Kreuzung {links|rechts} ab.'],
  ['travel', 'Ist das Hotel {nah am|weit vom} Bahnhof?'],
  ['travel', 'Brauche ich ein Visum für {Kanada|Kenia}?'],
  ['hr', 'Der Termin mit dem Bewerber ist {bestätigt|abgesagt}.'],
  ['finance', 'Der Kredit hat einen {festen|variablen} Zinssatz.'],
  ['retail', 'Ist die Milch {laktosefrei|laktosehaltig}?'],
  ['medicine', 'Soll der Patient {nüchtern|satt} zur Untersuchung kommen?'],
  ['support', 'Das Passwort muss {mindestens|höchstens} zwölf Zeichen haben.'],
  ['coding', 'Sortiere die Tabelle {aufsteigend|absteigend} nach Preis.'],
  ['law', 'Haftet der {Mieter|Vermieter} für den Schaden?'],
];

export function germanItems() {
  return GERMAN.map(([d, t]) => T('de', d, t));
}

// ---- CJK: one character or word changed (no spaces between words) ----
const CJK = [
  ['ja', 'travel', '明日の{東京|大阪}行きの新幹線を予約してください。'],
  ['ja', 'hr', '会議は{午前|午後}10時からですか？'],
  ['ja', 'medicine', 'この薬は食{前|後}に飲みますか？'],
  ['ja', 'coding', 'ファイルを{保存|削除}してください。'],
  ['ja', 'travel', '{上り|下り}の電車は何時に出ますか？'],
  ['ja', 'finance', '株を{買う|売る}べきですか？'],
  ['zh', 'travel', '帮我订明天去{北京|上海}的机票。'],
  ['zh', 'support', '请把温度调{高|低}一点。'],
  ['zh', 'coding', '这个文件需要{加密|解密}吗？'],
  ['zh', 'hr', '会议在{上午|下午}三点开始吗？'],
  ['zh', 'finance', '我想{买|卖}这只股票。'],
  ['zh', 'coding', '请按{升序|降序}排列结果。'],
  ['ko', 'travel', '내일 {서울|부산}행 기차를 예약해 주세요.'],
  ['ko', 'coding', '파일을 {저장|삭제}해 주세요.'],
  ['ko', 'hr', '회의는 {오전|오후} 10시인가요?'],
];

export function cjkItems() {
  return CJK.map(([l, d, t]) => T(l, d, t));
}

// ---- look-alike entities ----
const ENTITIES = [
  ['retail', 'Is the {iPhone 15 Pro|iPhone 15 Pro Max} available in blue titanium?'],
  ['coding', 'Migrate the service from {gpt-4o|gpt-4o-mini} and compare the cost.'],
  ['coding', 'Does the library support {Python 3.11|Python 3.12}?'],
  ['coding', 'Is this feature available in {Windows Server|Windows} 2022?'],
  ['travel', 'Book a hotel in {Paris|Paris, Texas} for the first week of June.'],
  ['travel', 'Is {JFK|LGA} closer to Manhattan by train?'],
  ['travel', 'Find flights to {Portland, Oregon|Portland, Maine} in August.'],
  ['finance', 'What was the closing price of {Alphabet Class A|Alphabet Class C} shares yesterday?'],
  ['finance', 'Summarize the annual report of {Meta Platforms|Meta Financial} for 2023.'],
  ['medicine', 'What is the maximum daily dose of {acetaminophen|acetylcysteine}?'],
  ['medicine', 'Can {lamotrigine|lamivudine} be stopped abruptly?'],
  ['medicine', 'Is {Humalog|Humulin} a rapid-acting insulin?'],
  ['coding', 'Install {react-dom|react-native} in the web project.'],
  ['coding', 'Explain the {S3 Standard|S3 Glacier} storage class for our backups.'],
  ['support', 'Reset the password for the {admin|admin2} account.'],
  ['support', 'Delete the {staging|staging-eu} environment tonight.'],
  ['retail', 'Do you have the {Galaxy S24|Galaxy S24+} in stock?'],
  ['retail', 'Is the {PlayStation 5|PlayStation 5 Pro} compatible with this controller?'],
  ['law', 'Summarize {Article 6|Article 6a} of the regulation.'],
  ['law', 'Does the {Data Act|Data Governance Act} apply to our sensors?'],
  ['hr', 'Is {Anna Schmidt|Anna Schmitt} on the onboarding list?'],
  ['hr', 'Schedule a call with {Mark Jensen|Mark Jansen} next week.'],
  ['support', 'Why is {api.example.com|app.example.com} returning 502?'],
  ['coding', 'Open the {config.yaml|config.yml} file and check the port.'],
  ['coding', 'Run the migration on {db-prod-1|db-prod-7}.'],
  ['finance', 'Pay invoice {INV-2041|INV-2014} from the operations budget.'],
  ['retail', 'Track the parcel for order {A1734|A1743}.'],
  ['travel', 'Is the {Hilton Garden Inn|Hilton} near the convention center?'],
  ['travel', 'Book a seat on {Lufthansa|Luxair} to Luxembourg.'],
  ['medicine', 'What causes {type 1|type 2} diabetes in children?'],
  ['coding', 'Is {Node 20|Node 22} required by the build?'],
  ['coding', 'Use the {us-east-1|us-east-2} region for the bucket.'],
  ['finance', 'Convert 500 {USD|AUD} to euros at today’s rate.'],
  ['finance', 'Where is the {Dow Jones|Dow Jones Transportation} index today?'],
  ['support', 'Upgrade the Madrid office to the {Pro|Pro Plus} plan.'],
  ['travel', 'How far is {Springfield, Illinois|Springfield, Missouri} from Chicago?'],
  ['retail', 'Is the {MacBook Air|MacBook Pro} 13-inch on sale?'],
  ['coding', 'Pin the dependency to {lodash|lodash-es} in package.json.'],
  ['medicine', 'Is {vitamin D2|vitamin D3} better absorbed?'],
  ['law', 'Which court handles appeals in {Georgia|Georgia, the country}?'],
];

export function entityItems() {
  return ENTITIES.map(([d, t]) => T('en', d, t));
}
