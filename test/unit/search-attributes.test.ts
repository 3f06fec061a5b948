import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  decodeLabelKeywords,
  FH_SEARCH_ATTRIBUTES,
  labelKeywords,
  sessionSearchAttributes,
  sessionSearchAttributeUpdates,
} from '../../src/wire/search-attributes';

const fields = { agent: 'coder', status: 'todo', labels: [], flagged: false, archived: false };
const byName = (pairs: Array<{ key: { name: string }; value: unknown }>) => Object.fromEntries(pairs.map((p) => [p.key.name, p.value]));

describe('session search attributes', () => {
  it('registers every attribute with its type, FhAgent first (fh run reads it as the agent attribute)', () => {
    expect(FH_SEARCH_ATTRIBUTES).toEqual({
      FhAgent: 'Keyword',
      FhKind: 'Keyword',
      FhStatus: 'Keyword',
      FhTitle: 'Text',
      FhLabels: 'KeywordList',
      FhFlagged: 'Bool',
      FhArchived: 'Bool',
      FhModel: 'Keyword',
      FhLastMessageAt: 'Datetime',
    });
    expect(Object.keys(FH_SEARCH_ATTRIBUTES)[0]).toBe('FhAgent');
  });

  it('start pairs leave absent values out; upserts unset them', () => {
    expect(byName(sessionSearchAttributes(fields))).toEqual({ FhKind: 'session', FhAgent: 'coder', FhStatus: 'todo', FhFlagged: false, FhArchived: false });
    expect(byName(sessionSearchAttributeUpdates(fields))).toEqual({
      FhKind: 'session',
      FhAgent: 'coder',
      FhStatus: 'todo',
      FhTitle: null,
      FhLabels: null,
      FhFlagged: false,
      FhArchived: false,
      FhModel: null,
      FhLastMessageAt: null,
    });
    const full = byName(sessionSearchAttributes({ ...fields, title: 'A title', labels: ['x'], model: 'm', lastMessageAt: 1_000 }));
    expect(full).toMatchObject({ FhTitle: 'A title', FhLabels: ['x'], FhModel: 'm', FhLastMessageAt: new Date(1_000) });
  });

  it('labels encode as name and name=value, and decode typed back', () => {
    const labels = { urgent: null, priority: 2, area: 'billing', shipped: true, ratio: 0.5, code: '007', eq: 'a=b' };
    const keywords = labelKeywords(labels);
    // Sorted: the same labels always give the same list (no upsert when nothing changed).
    expect(keywords).toEqual(['area', 'area=billing', 'code', 'code=007', 'eq', 'eq=a=b', 'priority', 'priority=2', 'ratio', 'ratio=0.5', 'shipped', 'shipped=true', 'urgent']);
    expect(decodeLabelKeywords(keywords)).toEqual(labels);
    // Order does not matter: a bare name never erases a value.
    expect(decodeLabelKeywords(['priority=2', 'priority'])).toEqual({ priority: 2 });
  });

  it('temporal-docker creates exactly the registered attributes', () => {
    const compose = readFileSync(path.join(__dirname, '../../temporal-docker/docker-compose.yml'), 'utf8');
    const block = /FH_SEARCH_ATTRIBUTES: >-\n((?: {8}\S.*\n)+)/.exec(compose);
    expect(block).not.toBeNull();
    const specs = block![1]!.trim().split(/\s+/).map((spec) => spec.split('='));
    expect(Object.fromEntries(specs)).toEqual(FH_SEARCH_ATTRIBUTES);
  });
});
