// Types of the matching evaluation set (index.mjs), for the CI test written in TypeScript.
export interface SetRequest {
  route: string;
  path: string;
  body: unknown;
}

export interface SetPair {
  family: string;
  side: 'adversarial' | 'benign';
  lang: string;
  api: string;
  context: string;
  note: string;
  recorded: SetRequest;
  incoming: SetRequest;
  decoys?: SetRequest[];
  also?: SetRequest[];
}

export interface FamilyRow {
  side: 'adversarial' | 'benign';
  family: string;
  pairs: number;
  falseHits: number;
  served: number;
  langs: string[];
  apis: string[];
}

export interface SetReport {
  rows: FamilyRow[];
  wrong: { pair: SetPair; outcome: string; why: string }[];
  adversarial: { pairs: number; falseHits: number };
  benign: { pairs: number; served: number; falseHits: number };
}

export function matchingSet(): SetPair[];
export function evaluate(
  pairs: readonly SetPair[],
  createReplayMatcher: (exchanges: never[], opts: never) => { match(req: never): Promise<unknown> },
  opts?: { matcher?: unknown },
): Promise<SetReport>;
export function upperBound(hits: number, n: number): number;
export function reportLines(report: SetReport): string[];
