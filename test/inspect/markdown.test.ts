import { describe, expect, it } from 'vitest';
import { mdCell, mdDetails, mdFence, mdTable } from '../../src/inspect/markdown.js';

describe('markdown for pull-request comments', () => {
  it('a cell cannot break its table, open HTML or start code', () => {
    expect(mdCell('a | b\nc')).toBe('a \\| b c');
    expect(mdCell('</details><script>x</script>')).toBe('&lt;/details&gt;&lt;script&gt;x&lt;/script&gt;');
    expect(mdCell('`rm -rf`')).toBe("'rm -rf'");
    expect(mdCell('back\\slash|')).toBe('back\\\\slash\\|');
    expect(mdCell({ a: 1 })).toBe('{"a":1}');
    expect(mdCell('x'.repeat(200), 10)).toBe('xxxxxxxxx…');
  });

  it('tables, folds and fences', () => {
    expect(mdTable(['a', 'n'], [['x', '1']], ['l', 'r'])).toEqual(['| a | n |', '| --- | ---: |', '| x | 1 |']);
    expect(mdDetails('more', [])).toEqual([]);
    expect(mdDetails('a <b>', ['x'])).toEqual(['<details>', '<summary>a &lt;b&gt;</summary>', '', 'x', '', '</details>']);
    // a fence longer than any backtick run inside, so a model's answer with ``` cannot close it
    expect(mdFence('say ```js\nx```')).toEqual(['````', 'say ```js', 'x```', '````']);
  });
});
