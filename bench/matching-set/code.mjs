// Adversarial family: symbols are meaning inside code, formulas, paths, queries and regexes. Each item is two
// snippets that differ in a symbol (or a flag, a path, an operator), asked in a sentence three ways: bare in the
// prose, in an inline `code` span, and in a fenced block.
import { item } from './build.mjs';

/** [domain, lead, tail, a, b, styles?] */
const SNIPPETS = [
  // shell
  ['coding', 'Explain what', 'does in the project folder.', 'rm -rf ./build', 'rm -rf /build'],
  ['coding', 'Explain what', 'does in the project folder.', 'rm -rf build/*', 'rm -rf build/'],
  ['coding', 'Is it safe to run', 'from the repository root?', 'cd ..', 'cd .'],
  ['coding', 'What does', 'change for the config file?', 'chmod 644 config.yml', 'chmod 744 config.yml'],
  ['coding', 'Explain what', 'lists on my laptop.', 'ls -la ~/projects', 'ls -la /projects'],
  ['coding', 'What happens to my work if I run', 'now?', 'git reset --hard HEAD~1', 'git reset --soft HEAD~1'],
  ['coding', 'Is it safe to run', 'on the shared branch?', 'git push --force', 'git push --force-with-lease'],
  ['coding', 'What does', 'copy?', 'cp -r src dist', 'cp -r dist src'],
  ['coding', 'What signal does', 'send to the process?', 'kill -9 1234', 'kill -15 1234'],
  ['coding', 'Explain what', 'does to the log files.', 'find . -name "*.log" -delete', 'find . -name "*.log"'],
  ['coding', 'What lines does', 'print?', 'grep -v error app.log', 'grep error app.log'],
  [
    'coding',
    'What does',
    'do to user 42?',
    'curl -X DELETE https://api.example.com/users/42',
    'curl -X GET https://api.example.com/users/42',
  ],
  ['coding', 'What does', 'do to the container?', 'docker rm -f web', 'docker stop web'],
  ['coding', 'Explain the flags in', 'for the nightly backup.', 'tar -xzf backup.tar.gz', 'tar -czf backup.tar.gz'],
  ['coding', 'Why does', 'need sudo?', 'sudo rm /etc/hosts', 'sudo rm /etc/host'],
  ['coding', 'What does', 'print in the CI job?', 'echo $HOME', 'echo $PATH'],
  ['coding', 'What is the difference in', 'for the existing file?', 'cat a.txt > b.txt', 'cat a.txt >> b.txt'],
  ['coding', 'Where does', 'record the dependency?', 'npm install --save-dev jest', 'npm install --save jest'],
  ['coding', 'Which versions does', 'allow?', 'pip install requests==2.31', 'pip install requests>=2.31'],
  // Python and JavaScript
  ['coding', 'In Python, what does', 'evaluate to?', '7 // 2', '7 / 2'],
  ['coding', 'In Python, what does', 'return when x is 3?', 'x ** 2', 'x * 2'],
  ['coding', 'Is', 'valid in a Python if statement?', 'a == b', 'a = b'],
  ['coding', 'When is', 'true in this Python check?', 'a != b', 'a == b'],
  ['coding', 'What does', 'do to the counter in the loop?', 'x += 1', 'x = 1'],
  ['coding', 'How many times does the loop run with the condition', 'when n is 5?', 'i < n', 'i <= n'],
  ['coding', 'When is the branch', 'taken in this Python code?', 'if a and b:', 'if a or b:'],
  ['coding', 'When is', 'true for an empty result?', 'x is None', 'x is not None'],
  ['coding', 'What does', 'return for a list of five items?', 'lst[1:]', 'lst[:1]'],
  ['coding', 'Which element does', 'return?', 'lst[-1]', 'lst[1]'],
  ['coding', 'Which numbers does', 'produce?', 'range(1, 10)', 'range(0, 10)'],
  ['coding', 'What happens when the key is missing in', '?', 'd.get("key")', 'd["key"]'],
  ['coding', 'In what order does', 'return the values?', 'sorted(xs, reverse=True)', 'sorted(xs)'],
  ['coding', 'What does', 'collect in the function signature?', '**kwargs', '*kwargs'],
  ['coding', 'Which elements does', 'keep?', '[x for x in xs if x]', '[x for x in xs if not x]'],
  ['coding', 'What does', 'compute for two integers?', 'a & b', 'a | b'],
  ['coding', 'What does', 'do to the bits of x?', 'x >> 2', 'x << 2'],
  ['coding', 'What is the value of the expression after', 'runs?', 'i++', '++i'],
  ['coding', 'What does', 'return when a is null?', 'a?.b', 'a.b'],
  ['coding', 'What does', 'return when x is 0?', 'x ?? y', 'x || y'],
  ['coding', 'Why does the linter prefer', 'in this comparison?', 'a === b', 'a == b'],
  // regular expressions
  ['coding', 'Does the regex', 'match the order number 12345?', '\\d{3}', '\\d{3,}'],
  ['coding', 'Which lines does the pattern', 'match?', '^abc', 'abc$'],
  ['coding', 'Does', 'match an empty string?', 'a+', 'a*'],
  ['coding', 'Which spellings does', 'match?', 'colou?r', 'colour'],
  ['coding', 'Which characters does', 'match?', '[a-z]', '[^a-z]'],
  ['coding', 'What does', 'match in the log line?', '\\d', '\\D'],
  ['coding', 'Does', 'match the word concatenate?', '\\bcat\\b', 'cat'],
  ['coding', 'What does', 'match in the string ababab?', '(ab)+', 'ab+'],
  ['coding', 'Does', 'match an empty line?', '.*', '.+'],
  ['coding', 'How many digits does', 'accept?', '[0-9]{2,4}', '[0-9]{2}'],
  // arithmetic and spreadsheets
  ['finance', 'What is', 'in the spreadsheet formula?', '5 * 5', '5 / 5'],
  ['finance', 'What is', 'in the pricing model?', '2^10', '2*10'],
  ['finance', 'What is', 'in the allocation formula?', '7 % 3', '7 / 3'],
  ['finance', 'What does', 'give when a is 1, b is 2 and c is 3?', '(a + b) * c', 'a + b * c'],
  ['finance', 'For which x is', 'zero?', 'x^2 - 1', 'x^2 + 1'],
  ['finance', 'What is', 'in the report?', 'sqrt(16)', 'cbrt(16)'],
  ['finance', 'What is', 'on the invoice line?', '10 - 3', '10 + 3'],
  ['finance', 'What is', 'as a fraction?', '1/2 + 1/3', '1/2 * 1/3'],
  ['finance', 'When is', 'true for the two balances?', 'a <= b', 'a < b'],
  ['finance', 'What does', 'return in the sheet?', '=SUM(A1:A10)', '=SUM(A1,A10)'],
  ['finance', 'What does', 'compute in column C?', '=A1*B1', '=A1/B1'],
  // SQL
  [
    'coding',
    'Explain the query',
    'for the overdue report.',
    "SELECT * FROM invoices WHERE due < now() AND status = 'unpaid'",
    "SELECT * FROM invoices WHERE due < now() OR status = 'unpaid'",
  ],
  [
    'coding',
    'Explain what',
    'returns first.',
    'SELECT * FROM users ORDER BY created_at ASC',
    'SELECT * FROM users ORDER BY created_at DESC',
  ],
  [
    'coding',
    'Which rows does',
    'keep?',
    'SELECT * FROM customers LEFT JOIN orders ON orders.customer_id = customers.id',
    'SELECT * FROM customers INNER JOIN orders ON orders.customer_id = customers.id',
  ],
  ['coding', 'How many rows does', 'return?', 'SELECT DISTINCT city FROM stores', 'SELECT city FROM stores'],
  ['coding', 'Which products does', 'return?', 'SELECT * FROM products WHERE price > 100', 'SELECT * FROM products WHERE price >= 100'],
  ['coding', 'Which rows does', 'return?', "SELECT * FROM users WHERE name = 'x'", "SELECT * FROM users WHERE name != 'x'"],
  ['coding', 'What does', 'delete?', 'DELETE FROM users WHERE id = 4', 'DELETE FROM users'],
  ['coding', 'Which page does', 'return?', 'SELECT * FROM logs LIMIT 10', 'SELECT * FROM logs LIMIT 10 OFFSET 10'],
  ['coding', 'What does', 'count?', 'SELECT COUNT(*) FROM visits', 'SELECT COUNT(DISTINCT user_id) FROM visits'],
  [
    'coding',
    'Which emails does',
    'match?',
    "SELECT * FROM users WHERE email LIKE '%@acme.com'",
    "SELECT * FROM users WHERE email LIKE '@acme.com%'",
  ],
  // paths, URLs, globs, config
  ['coding', 'Which files does the glob', 'match?', 'src/**/*.ts', 'src/*/*.ts'],
  ['support', 'Why is', 'growing so fast?', '/var/log/app.log', '/var/log/app.log.1'],
  ['support', 'Who can write to', 'on the build machine?', 'C:\\Users\\admin', 'D:\\Users\\admin'],
  ['support', 'Is', 'reachable from the office network?', 'https://example.com/api/v1', 'http://example.com/api/v1'],
  ['support', 'Who owns the domain', 'and when does it expire?', 'example.com', 'example.org'],
  ['coding', 'Should I share', 'with the new server?', '~/.ssh/id_rsa', '~/.ssh/id_rsa.pub'],
  ['coding', 'What is in', 'for this service?', './config', '../config'],
  ['coding', 'Which handler serves', 'in the router?', '/api/users/:id', '/api/users'],
  ['coding', 'Which test files match', 'in the jest config?', '*.test.js', '*.spec.js'],
  ['coding', 'Should', 'be committed to the repository?', '.env', '.env.example'],
  ['coding', 'What type does the config value have in', '?', '{"retries": 3}', '{"retries": "3"}', ['inline', 'fenced']],
  ['coding', 'Is the flag a boolean in', '?', '"enabled": true', '"enabled": "true"', ['inline', 'fenced']],
  ['coding', 'What does the version range', 'allow in package.json?', '^1.2.3', '~1.2.3'],
];

const STYLES = ['bare', 'inline', 'fenced'];

function sentence(style, lead, code, tail) {
  if (style === 'bare') return `${lead} ${code} ${tail}`;
  if (style === 'inline') return `${lead} \`${code}\` ${tail}`;
  return `${lead} this:\n\`\`\`\n${code}\n\`\`\`\n${tail}`;
}

export function codeItems() {
  const out = [];
  for (const [domain, lead, tail, a, b, styles = STYLES] of SNIPPETS)
    for (const style of styles)
      out.push(item('en', domain, [sentence(style, lead, a, tail), sentence(style, lead, b, tail)], `${a} / ${b} (${style})`));
  // The same in other languages: code does not translate.
  const other = [
    ['de', 'Erkläre, was', 'im Projektordner tut.', 'rm -rf ./build', 'rm -rf /build'],
    ['de', 'Was ergibt', 'in Python?', '7 // 2', '7 / 2'],
    ['fr', 'Explique ce que fait', 'dans le dossier du projet.', 'rm -rf ./build', 'rm -rf /build'],
    ['fr', 'Que vaut', 'en Python ?', 'x ** 2', 'x * 2'],
    ['es', 'Explica qué hace', 'en la carpeta del proyecto.', 'rm -rf ./build', 'rm -rf /build'],
    [
      'es',
      '¿Qué devuelve la consulta',
      '?',
      "SELECT * FROM facturas WHERE vence < now() AND estado = 'impaga'",
      "SELECT * FROM facturas WHERE vence < now() OR estado = 'impaga'",
    ],
  ];
  for (const [lang, lead, tail, a, b] of other)
    for (const style of STYLES)
      out.push(item(lang, 'coding', [sentence(style, lead, a, tail), sentence(style, lead, b, tail)], `${a} / ${b} (${style})`));
  return out;
}
