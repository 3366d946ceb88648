/**
 * Issue 41's tier, for every route of the OpenAPI document: JSON nested 5,000 deep, as the
 * whole body and in each top-level field, is refused with 400 and writes nothing; nested
 * just within HTTP_MAX_JSON_DEPTH it never answers 5xx. Control characters (NUL, tab,
 * newline, DEL, an escape) and surrounding spaces in every URL field of a body (format uri,
 * or a name ending in url/Url, or `resource`) and in every path and query parameter answer
 * a 4xx in the envelope or a handled 2xx, never a 5xx; and no URL column ends up holding one.
 * The routes' bodies are otherwise plausible (from their schemas, seeded), so the checks
 * run past validation where they can.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { sql } from 'kysely';
import { plausible, pct, type Schema } from './hostile.js';
import { send, type RawRequest, type RawResponse } from './raw-http.js';
import { ADMIN, fault, startFuzzNode, type FuzzNode, type Op } from './fuzz-node.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20_261_121);
const DEEP = 5000;
/** HTTP_MAX_JSON_DEPTH's default */
const LIMIT = 32;

/** JSON text of `depth` levels: arrays, or objects every other level (depth 0: `inner`) */
const deepText = (depth: number, inner = '1'): string => {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i += 1) {
    if (i % 2 === 0) { open += '['; close = `]${close}`; } else { open += '{"a":'; close = `}${close}`; }
  }
  return `${open}${inner}${close}`;
};

const CONTROLS = ['\u0000', '\t', '\n', '\r\n', '\u007f', '\u001b', '\u0085'];
/** a URL with each control at its end and in its middle, and with spaces around it */
const hostileUrls = (base: string): string[] => [
  ...CONTROLS.flatMap((c) => [`${base}${c}`, `${base.slice(0, 10)}${c}${base.slice(10)}`, `${c}${base}`]),
  ` ${base}`, `${base} `, `${base}\u00a0`, '\u0000',
];
/** path and query values: each control, percent-encoded, around and inside a plausible value */
const hostileParams = (v: string): string[] => [
  ...CONTROLS.flatMap((c) => [`${pct(v)}${pct(c)}`, `${pct(c)}${pct(v)}`, `${pct(v.slice(0, 1))}${pct(c)}${pct(v.slice(1))}`]),
  `%20${pct(v)}`, `${pct(v)}%20`, '%00', `${pct(v)}%00%00`,
];

const isUrlField = (name: string, s: Schema): boolean =>
  s['format'] === 'uri' || /url$/i.test(name) || name === 'resource';

/** Paths (property names from the top) of the URL string fields of a body schema, three levels down. */
function urlFields(s: Schema | undefined, at: string[] = []): string[][] {
  if (!s || at.length > 3) return [];
  const alternatives = Array.isArray(s['anyOf']) ? (s['anyOf'] as Schema[]) : [s];
  const out: string[][] = [];
  for (const alt of alternatives) {
    for (const [name, p] of Object.entries((alt['properties'] ?? {}) as Record<string, Schema>)) {
      if (p['type'] === 'string' && isUrlField(name, p)) out.push([...at, name]);
      else if (p['type'] === 'object') out.push(...urlFields(p, [...at, name]));
    }
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function withField(body: unknown, path: string[], value: unknown): Record<string, unknown> {
  const root: Record<string, unknown> = body !== null && typeof body === 'object' && !Array.isArray(body) ? structuredClone(body as Record<string, unknown>) : {};
  let o = root;
  for (const k of path.slice(0, -1)) {
    const next = o[k];
    const child: Record<string, unknown> = isRecord(next) ? next : {};
    o[k] = child;
    o = child;
  }
  o[path[path.length - 1]!] = value;
  return root;
}

/** JSON text of `body` with the raw JSON text `text` as its top-level field `name` */
const withRawField = (body: Record<string, unknown>, name: string, text: string): string => {
  const rest = Object.entries(body).filter(([k]) => k !== name).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  return `{${[...rest, `${JSON.stringify(name)}:${text}`].join(',')}}`;
};

describe('fuzz: deep nesting and control characters on every route (issue 41)', function () {
  this.timeout(300_000);
  let node: FuzzNode;
  let apiKey = '';

  before(async () => {
    node = await startFuzzNode('fuzz-nesting');
    const made = await send(node.api.url, {
      method: 'POST', path: `/v1/gateway/${node.gateway.address}/api-keys`,
      headers: { authorization: `Bearer ${node.gatewayJwt}`, 'content-type': 'application/json' }, body: '{}',
    });
    expect(made.status, made.text).to.equal(201);
    apiKey = (made.json as { key: string }).key;
  });
  after(async () => { await node?.close(); });

  const sample = <T>(a: fc.Arbitrary<T>, salt: number): T => fc.sample(a, { seed: SEED + salt, numRuns: 1 })[0]!;
  /** credentials that reach the route's code: the admin key where the route takes it, else the gateway's JWT and API key */
  const credentials = (op: Op): Record<string, string> => (/webhooks|admin|merchant/.test(op.path)
    ? { 'x-admin-key': ADMIN }
    : { authorization: `Bearer ${node.gatewayJwt}`, 'x-api-key': apiKey });
  /** the route's path with plausible parameters, the fixture gateway's address for base58 ones */
  const plausiblePath = (op: Op, k: number, hostile?: { name: string; value: string }): string => {
    const values = new Map(op.params.filter((p) => p.in === 'path').map((p, i) => {
      const raw = typeof p.schema['pattern'] === 'string' && p.schema['pattern'].includes('1-9A-HJ-NP') ? node.gateway.address : String(sample(plausible(p.schema), k * 31 + i));
      return [p.name, hostile?.name === p.name ? hostile.value : pct(raw)] as const;
    }));
    return op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => values.get(name) ?? '1');
  };
  const plausibleQuery = (op: Op, k: number, hostile?: { name: string; value: string }): string => {
    const pairs = op.params.filter((p) => p.in === 'query' && (p.required || p.name === hostile?.name)).map((p, i) =>
      `${pct(p.name)}=${hostile?.name === p.name ? hostile.value : pct(String(sample(plausible(p.schema), k * 37 + i)))}`);
    return pairs.length ? `?${pairs.join('&')}` : '';
  };
  const plausibleBody = (op: Op, k: number): Record<string, unknown> => {
    const b = sample(plausible(op.body), k);
    return b !== null && typeof b === 'object' && !Array.isArray(b) ? b as Record<string, unknown> : {};
  };
  const request = (op: Op, path: string, body?: string): RawRequest => ({
    method: op.method, path, headers: { ...credentials(op), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body } : {}),
  });
  const describeReq = (req: RawRequest, res: RawResponse) => `${req.method} ${req.path.slice(0, 200)} ${String(req.body ?? '').slice(0, 200)} → ${res.status} ${res.text.slice(0, 200)}`;

  /** Rows in every table of the test's database, to see that refused requests wrote nothing. */
  async function rowCounts(): Promise<Record<string, number>> {
    const { rows } = await sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`.execute(node.env.db);
    const out: Record<string, number> = {};
    for (const { table_name: t } of rows) {
      const r = await sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql.table(t)}`.execute(node.env.db);
      out[t] = Number(r.rows[0]!.n);
    }
    return out;
  }

  it('refuses every JSON body nested 5,000 deep, whole or in any top-level field, with 400, writing nothing', async () => {
    const writes = node.ops.filter((o) => o.body);
    expect(writes.length).to.be.at.least(10);
    const before = await rowCounts();
    let n = 0;
    for (const [k, op] of writes.entries()) {
      const path = plausiblePath(op, k) + plausibleQuery(op, k);
      const body = plausibleBody(op, k);
      const fields = Object.keys((op.body?.['properties'] ?? {}));
      const bodies = [deepText(DEEP), deepText(DEEP + 1), ...fields.map((f) => withRawField(body, f, deepText(DEEP)))];
      for (const text of bodies) {
        const req = request(op, path, text);
        const res = await send(node.api.url, req);
        n += 1;
        expect(res.status, describeReq(req, res)).to.equal(400);
        expect(fault(op, res), describeReq(req, res)).to.equal(undefined);
        expect((res.json as { code: string }).code).to.equal('invalid_input');
      }
    }
    expect(n).to.be.above(writes.length * 2);
    expect(await rowCounts()).to.deep.equal(before);
  });

  it('answers bodies nested just within the limit, in any top-level field, below 500', async () => {
    for (const [k, op] of node.ops.filter((o) => o.body).entries()) {
      const path = plausiblePath(op, k) + plausibleQuery(op, k);
      const body = plausibleBody(op, k);
      for (const f of Object.keys((op.body?.['properties'] ?? {}))) {
        for (const text of [deepText(LIMIT - 1), deepText(LIMIT - 2, '"a\\u0000b"')]) {
          const req = request(op, path, withRawField(body, f, text));
          const res = await send(node.api.url, req);
          expect(fault(op, res), describeReq(req, res)).to.equal(undefined);
        }
      }
    }
  });

  it('answers control characters in every URL field and every path and query parameter below 500, in the envelope', async () => {
    let urlCases = 0;
    let paramCases = 0;
    for (const [k, op] of node.ops.entries()) {
      const body = op.body ? plausibleBody(op, k) : undefined;
      const bodyText = body !== undefined ? JSON.stringify(body) : undefined;
      for (const field of urlFields(op.body)) {
        for (const url of hostileUrls('https://merchant.example/hook')) {
          const req = request(op, plausiblePath(op, k) + plausibleQuery(op, k), JSON.stringify(withField(body, field, url)));
          const res = await send(node.api.url, req);
          urlCases += 1;
          expect(fault(op, res), describeReq(req, res)).to.equal(undefined);
        }
      }
      for (const p of op.params) {
        const v = p.in === 'path' && typeof p.schema['pattern'] === 'string' && p.schema['pattern'].includes('1-9A-HJ-NP')
          ? node.gateway.address : String(sample(plausible(p.schema), k * 41));
        for (const value of hostileParams(v || 'a')) {
          const hostile = { name: p.name, value };
          const req = request(op, p.in === 'path' ? plausiblePath(op, k, hostile) + plausibleQuery(op, k) : plausiblePath(op, k) + plausibleQuery(op, k, hostile), bodyText);
          const res = await send(node.api.url, req);
          paramCases += 1;
          expect(fault(op, res), describeReq(req, res)).to.equal(undefined);
        }
      }
    }
    expect(urlCases, 'URL fields found').to.be.at.least(hostileUrls('x').length * 3);
    expect(paramCases).to.be.above(100);
  });

  it('keeps no control character or surrounding space in any stored URL', async () => {
    const { rows } = await sql<{ table_name: string; column_name: string }>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = 'public' AND data_type IN ('text', 'character varying') AND (column_name LIKE '%url%' OR column_name = 'resource')`.execute(node.env.db);
    expect(rows.length).to.be.at.least(3);
    for (const { table_name: t, column_name: c } of rows) {
      const bad = await sql<{ v: string }>`SELECT ${sql.ref(c)} AS v FROM ${sql.table(t)} WHERE ${sql.ref(c)} ~ '[\\x01-\\x1f\\x7f-\\x9f]|^\\s|\\s$' LIMIT 3`.execute(node.env.db);
      expect(bad.rows.map((r) => r.v), `${t}.${c}`).to.deep.equal([]);
    }
  });
});
