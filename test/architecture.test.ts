/**
 * The shape of `src/`: no import cycles between files, none between the top-level folders (the layers: tape,
 * providers, config, replay, proxy, inspect, cli, ...; a sub-folder belongs to its layer), and nothing imports `cli/`. The direction of the layers
 * (cli -> proxy / inspect -> replay -> providers -> tape) is enforced by the lint (`eslint.config.js`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');

type Graph = Map<string, Set<string>>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** File -> the files it imports (relative imports inside src, type imports included). */
function importGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of sourceFiles(SRC)) {
    const deps = ts
      .preProcessFile(readFileSync(file, 'utf8'), true, true)
      .importedFiles.map((i) => i.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => path.resolve(path.dirname(file), name).replace(/\.js$/, '.ts'))
      .filter((dep) => dep.startsWith(SRC + path.sep));
    graph.set(path.relative(SRC, file), new Set(deps.map((d) => path.relative(SRC, d))));
  }
  return graph;
}

/**
 * The layer graph: an edge between two top-level folders when a file of one imports a file of the other. `index.ts`,
 * the library's public surface, stands on its own above everything; the base modules beside it (errors, log,
 * version) sit below everything.
 */
function folderGraph(files: Graph): Graph {
  const node = (file: string): string => (file === 'index.ts' ? 'index.ts' : file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');
  const folders: Graph = new Map();
  for (const [file, deps] of files) {
    const from = node(file);
    const out = folders.get(from) ?? new Set<string>();
    for (const dep of deps) if (node(dep) !== from) out.add(node(dep));
    folders.set(from, out);
  }
  return folders;
}

/** Strongly connected components with more than one node, or a node importing itself (Tarjan). */
function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('architecture', () => {
  const files = importGraph();

  it('finds a cycle when there is one (the check itself)', () => {
    const g: Graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c']]);
    expect(files.size).toBeGreaterThan(50);
  });

  it('has no import cycle between files', () => {
    expect(cycles(files)).toEqual([]);
  });

  it('has no import cycle between layers (top-level folders)', () => {
    expect(cycles(folderGraph(files))).toEqual([]);
  });

  it('imports cli/ from nowhere but cli/ itself', () => {
    const into = [...files].flatMap(([file, deps]) =>
      file.startsWith('cli/') ? [] : [...deps].filter((d) => d.startsWith('cli/')).map((d) => `${file} -> ${d}`),
    );
    expect(into).toEqual([]);
  });
});
