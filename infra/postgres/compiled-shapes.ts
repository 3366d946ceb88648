/**
 * Compiled SQL kept per query shape. Kysely builds a tree of frozen nodes for every query
 * and walks it to compile the SQL text, per request (on the read mix's list routes about
 * 5% of an API process's CPU, and more in garbage); the text of a list route's query
 * changes only with which filters it has, not with their values. So a query is built and
 * compiled once per shape with a marker in place of each value, and each request's values
 * are put in the markers' places among the parameters.
 *
 * The contract asked of `build`: it uses each value of `args` (the leaves: strings,
 * numbers, bigints, Buffers) only as a query parameter, never in a branch, a computation
 * or a literal; what it decides by (which keys are set, array lengths, booleans) is the
 * shape. A shape whose compiled form breaks that (a marker missing from the parameters,
 * found in the SQL text or inside another parameter) is never kept: it compiles per
 * request as before. Shapes are kept per process, not per Db: the Dbs here have no
 * plugins, so a builder's text does not depend on which one built it.
 */
import type { Compilable, CompiledQuery } from 'kysely';

/** Shapes kept per process: a shape past this compiles per request. */
const MAX_SHAPES = 1000;
const MARK = '\u0000shape-value:';

type Leaf = string | number | bigint | Buffer;

/** A parameter: the index of the request's value it is (-1: a constant of the query, kept in compiled.parameters), and whether spelled as text. */
interface Slot { value: number; text: boolean }

interface Shape {
  /** undefined: the shape breaks the contract, compile per request */
  compiled: CompiledQuery | undefined;
  slots: Slot[];
}

const shapes = new Map<string, Shape>();

/**
 * A value's marker: a string for a string or a Buffer; for a number or a bigint, one of
 * its own type that no query uses (negative, fractional), so that a builder that spells
 * it as text (String(slot)) is told from one that binds the number.
 */
function markerOf(v: Leaf, i: number): Leaf {
  if (typeof v === 'number') return -(987_654_321_000 + i + 0.25);
  if (typeof v === 'bigint') return -(987_654_321_000n + BigInt(i));
  return `${MARK}${i}`;
}

/** Which value a compiled parameter is the marker of, and whether as text. */
function slotOf(p: unknown, markers: ReadonlyMap<unknown, number>, asText: ReadonlyMap<string, number>): Slot {
  const i = markers.get(p);
  if (i !== undefined) return { value: i, text: false };
  const t = typeof p === 'string' ? asText.get(p) : undefined;
  return t === undefined ? { value: -1, text: false } : { value: t, text: true };
}

const isLeaf = (v: unknown): v is Leaf => typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' || Buffer.isBuffer(v);

/**
 * Walks `args`: its values in order (`values`), its shape as text (`sig`), and when
 * `marked` the same tree with each value replaced by its marker.
 */
function walk(v: unknown, values: Leaf[], sig: string[], marked: boolean): unknown {
  if (isLeaf(v)) {
    values.push(v);
    sig.push('v');
    return marked ? markerOf(v, values.length - 1) : undefined;
  }
  if (v === undefined || v === null || typeof v === 'boolean') {
    sig.push(String(v));
    return v;
  }
  if (Array.isArray(v)) {
    sig.push(`[${v.length}`);
    const out = v.map((x) => walk(x, values, sig, marked));
    sig.push(']');
    return out;
  }
  if (typeof v === 'object') {
    sig.push('{');
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      sig.push(k);
      out[k] = walk((v as Record<string, unknown>)[k], values, sig, marked);
    }
    sig.push('}');
    return out;
  }
  // a function or a symbol: not a shape this file reads
  throw new Error('compiled-shapes: args hold only values, arrays, plain objects, booleans and undefined');
}

function learn(build: (args: never) => Compilable, args: unknown): Shape {
  const values: Leaf[] = [];
  const marked = walk(args, values, [], true);
  const compiled = build(marked as never).compile();
  const markers = new Map<unknown, number>();
  const asText = new Map<string, number>();
  values.forEach((v, i) => {
    const m = markerOf(v, i);
    markers.set(m, i);
    if (typeof m !== 'string') asText.set(String(m), i);
  });
  const slots: Slot[] = [];
  const seen = new Set<number>();
  const spelled = (text: string) => text.includes(MARK) || [...asText.keys()].some((t) => text.includes(t));
  let sound = !spelled(compiled.sql);
  for (const p of compiled.parameters) {
    const slot = slotOf(p, markers, asText);
    if (slot.value >= 0) seen.add(slot.value);
    else if (typeof p === 'string' && spelled(p)) sound = false;
    slots.push(slot);
  }
  if (seen.size !== values.length) sound = false;
  return { compiled: sound ? compiled : undefined, slots };
}

/**
 * The query `build(args)` compiles to, taken from the shape's compiled form when `build`
 * has been compiled for this shape under `name` before. `name` names the builder and
 * whatever else it closes over that changes its text (a table chosen by kind, say).
 */
export function compileShaped<A, R>(name: string, args: A, build: (args: A) => Compilable<R>): CompiledQuery<R> {
  const values: Leaf[] = [];
  const sig: string[] = [name];
  walk(args, values, sig, false);
  const key = sig.join('\u0001');
  let shape = shapes.get(key);
  if (shape === undefined) {
    if (shapes.size >= MAX_SHAPES) return build(args).compile();
    shape = learn(build, args);
    shapes.set(key, shape);
  }
  const c = shape.compiled as CompiledQuery<R> | undefined;
  if (c === undefined) return build(args).compile();
  const parameters = shape.slots.map((s, i) => (s.value < 0 ? c.parameters[i] : s.text ? String(values[s.value]) : values[s.value]));
  return { ...c, parameters };
}
