import { describe, expect, it } from 'vitest';
import { providerOfModel } from '../../src/config/prices.js';
import { providerFamilies } from '../../src/providers/registry.js';
import { buildOverridePlan, isLiveCall, overridesFor, splitRouteValue } from '../../src/replay/override-targets.js';
import { isTapedeckError } from '../../src/errors.js';

const families = providerFamilies();

describe('the provider a model belongs to', () => {
  it('reads the price table families, after snapshot and vendor prefixes', () => {
    expect(providerOfModel('gpt-4.1-2025-04-14', families)).toEqual({ provider: 'openai' });
    expect(providerOfModel('openai/o3-mini', families)).toEqual({ provider: 'openai' });
    expect(providerOfModel('claude-haiku-4-5-20251001', families)).toEqual({ provider: 'anthropic' });
    expect(providerOfModel('gemini-2.5-pro', families)).toEqual({ provider: 'gemini' });
    expect(providerOfModel('o30', families)).toBeNull(); // o3 names o3 and o3-..., not any name starting "o3"
    expect(providerOfModel('mistral-large', families)).toBeNull();
    expect(providerOfModel('gpt-x', { a: ['gpt-'], b: ['gpt-x'] })).toEqual({ ambiguous: ['a', 'b'] });
  });
});

describe('targeting', () => {
  const openai = { route: '/openai', provider: 'openai', model: 'gpt-4o-mini' };
  const gateway = { route: '/gw', provider: 'openai-compatible', model: 'gpt-4o' };
  const claude = { route: '/anthropic', provider: 'anthropic', model: 'claude-sonnet-4-6' };

  it('a model goes to its provider (and a gateway serving that family); other fields follow it; a route wins', () => {
    const plan = buildOverridePlan(
      { model: ['gpt-4.1'], temperature: [0, { route: '/anthropic', value: 1 }], maxTokens: [{ route: '/openai', value: 9 }] },
      { families },
    );
    expect(overridesFor(plan, openai)).toEqual({ model: 'gpt-4.1', temperature: 0, maxTokens: 9 });
    expect(overridesFor(plan, gateway)).toEqual({ model: 'gpt-4.1', temperature: 0 });
    expect(overridesFor(plan, claude)).toEqual({ temperature: 1 });
  });

  it('without a model, plain values reach every live call; live routes limit which calls go live', () => {
    const plan = buildOverridePlan({ systemPrompt: ['be brief'] }, { families, liveRoutes: ['/anthropic/'] });
    expect(overridesFor(plan, openai)).toEqual({ systemPrompt: 'be brief' });
    expect(isLiveCall(plan, openai)).toBe(false);
    expect(isLiveCall(plan, claude)).toBe(true);
  });

  it('refuses an unknown or ambiguous model, and two models for one provider', () => {
    const codeOf = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (err) {
        return isTapedeckError(err) ? err.code : 'other';
      }
      return undefined;
    };
    expect(codeOf(() => buildOverridePlan({ model: ['llama-3'] }, { families }))).toBe('UNKNOWN_MODEL_PROVIDER');
    expect(codeOf(() => buildOverridePlan({ model: ['gpt-x'] }, { families: { a: ['gpt-'], b: ['gpt-x'] } }))).toBe(
      'UNKNOWN_MODEL_PROVIDER',
    );
    expect(codeOf(() => buildOverridePlan({ model: ['gpt-4.1', 'gpt-4o'] }, { families }))).toBe('BAD_ARGS');
    expect(codeOf(() => buildOverridePlan({ model: ['gpt-4.1', { route: '/x', value: 'llama' }] }, { families }))).toBeUndefined();
  });

  it('reads ROUTE=VALUE only when the text starts with a route prefix', () => {
    expect(splitRouteValue('/anthropic=claude-haiku-4-5')).toEqual({ route: '/anthropic', value: 'claude-haiku-4-5' });
    expect(splitRouteValue('a=b is not a route')).toBeUndefined();
    expect(splitRouteValue('gpt-4.1')).toBeUndefined();
  });
});
