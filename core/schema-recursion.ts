/**
 * A recursive schema whose check doubles at each level of the value. `{ anyOf: [A, B] }` where A
 * and B both lead back (through `$ref`) to the same schema for the items of an array: typebox's
 * check tries both for each level of nesting, so a 54-byte input nested 26 deep took 2.3 s to be
 * refused, and each level more doubles it. The check itself must stay exact, so such a schema is
 * refused at load instead.
 *
 * The walk: each schema reached by entering a value (a property, an item, a `contains`…) is a
 * level; from it, the schemas applied to the *same* value (`allOf`, `anyOf`, `oneOf`, `not`,
 * `if`/`then`/`else`, `dependentSchemas`, a reference) are followed, counting paths, to the
 * schemas they apply to the next value down. Where the levels form a cycle with more paths than
 * levels, the work grows as 2^depth; a single path per level (a tree of nodes, a linked list)
 * grows with the value only. Distinct property names reach distinct values, so `left` and `right`
 * both pointing back to the root do not count twice.
 *
 * The same graph serves the other costs a schema's references can hide: a schema applied to one
 * value again and again, or forever (`overApplied`), references that land in too many places to
 * follow (`unfollowedReferences`), both refused at load by check.ts, and the schemas one value may
 * meet (`schemasMet`), by which shared-validators.ts bounds each call's check. Every reference is
 * followed where typebox's own resolver lands it (`followReferences`): a loop missed by resolving
 * against the root alone overflows the host's stack on every call.
 */
import type { TSchema } from 'typebox';
import { NextStack, Resolve, Stack, type XStack } from 'typebox/schema';
import { escapeSegment } from './json-pointer.ts';
import { rootDefinitions, separateRoot } from './schema-patterns.ts';
import { DATA_KEYWORDS, resolvedOnce, sizeOf } from './schema-validator.ts';

interface Node {
  /** Where the schema is: the segments below its parent's place (pointers are built only to report one). */
  parent: Node | undefined;
  path: readonly string[];
  schema: Record<string, unknown>;
  /** Inside `const`, `enum`, `default` or `examples`: a schema only if a reference lands there. */
  data: boolean;
}

function pointerOf(node: Node): string {
  const parts: string[] = [];
  for (let n: Node | undefined = node; n; n = n.parent) parts.unshift(...n.path.map(escapeSegment));
  return parts.map((p) => `/${p}`).join('');
}

/** Keywords applying their schema, or each of their schemas, to the value itself. */
const IN_PLACE_ONE = ['not', 'if', 'then', 'else'];
const IN_PLACE_LIST = ['allOf', 'anyOf', 'oneOf'];
const IN_PLACE_MAP = ['dependentSchemas', 'dependencies'];
/** Keywords applying their schema to any key's value (`k*`), or any item (`i*`), below. */
const ANY_KEY = ['unevaluatedProperties', 'propertyNames'];
const ANY_ITEM = ['additionalItems', 'contains', 'unevaluatedItems'];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A schema's objects, with the schemas each applies to the same value and to the values below. */
interface Graph {
  root: Node;
  nodes: readonly Node[];
  nodeOf(schema: unknown): Node | undefined;
  /** Schemas with a reference at or below them: the only ones from which a walk can come back up. */
  reaching: Set<Node>;
  inPlace(s: Record<string, unknown>): unknown[];
  /**
   * The schemas for the values below, by selector: `k:<name>` and `i:<index>` pick one key or item,
   * `k*` and `i*` any, and `k+<names>` (additionalProperties) any key but the named ones.
   */
  children(s: Record<string, unknown>): [string, unknown][];
  /** A schema whose references resolve in more ways than are followed (MAX_FOLLOW_WORK, MAX_STACKS_PER_SCHEMA). */
  tooVaried?: Node;
}

/** Each check below reads the same graph of one schema: it is built once. */
const graphs = new WeakMap<object, Graph | undefined>();

function graphOf(root: unknown): Graph | undefined {
  if (!isRecord(root)) return undefined;
  if (!graphs.has(root)) graphs.set(root, schemaGraph(root));
  return graphs.get(root);
}

/**
 * The pointer of a schema whose references resolve in more ways than the host follows (each
 * nested `$id` and `$dynamicAnchor` in scope on the way may change where one lands), or undefined.
 * Until each is followed, no loop can be ruled out: such a schema is refused.
 */
export function unfollowedReferences(schema: unknown): string | undefined {
  const tooVaried = graphOf(schema)?.tooVaried;
  return tooVaried && pointerOf(tooVaried);
}

/** The graph of a schema with a reference in it; without one, a schema as JSON is a tree. */
function schemaGraph(root: Record<string, unknown>): Graph | undefined {
  const size = sizeOf(root, Number.POSITIVE_INFINITY);
  if (size.refs === 0) return undefined;
  const byObject = new Map<object, Node>();
  const reaching = new Set<Node>();
  // Every object is indexed, data (`default`, `const`) included: typebox's resolver finds a
  // reference's target there too, and a schema there is applied like any other.
  const index = (schema: unknown, parent: Node | undefined, path: readonly string[], data: boolean): boolean => {
    if (schema === null || typeof schema !== 'object') return false;
    if (Array.isArray(schema)) {
      let refers = false;
      schema.forEach((s, i) => {
        if (index(s, parent, [...path, String(i)], data)) refers = true;
      });
      return refers;
    }
    const known = byObject.get(schema);
    if (known) return reaching.has(known);
    const node: Node = { parent, path, schema: schema as Record<string, unknown>, data };
    byObject.set(schema, node);
    let refers = REFERENCES.some((k) => typeof (schema as Record<string, unknown>)[k] === 'string');
    for (const [key, sub] of Object.entries(schema))
      if (index(sub, node, [key], data || DATA_KEYWORDS.has(key))) refers = true;
    if (refers) reaching.add(node);
    return refers;
  };
  index(root, undefined, [], false);

  const nodeOf = (schema: unknown) => (isRecord(schema) ? byObject.get(schema) : undefined);
  const refers = (schema: object) => {
    const node = byObject.get(schema);
    return node !== undefined && reaching.has(node);
  };
  const { targets: found, tooVaried } = followReferences(root, size.nodes, refers);
  const targets = new Map<Node, Node[]>();
  for (const [from, to] of found)
    targets.set(
      nodeOf(from)!,
      [...to].flatMap((t) => nodeOf(t) ?? []),
    );
  const inPlace = (s: Record<string, unknown>): unknown[] => [
    ...sameValue(s),
    ...(targets.get(nodeOf(s)!) ?? []).map((n) => n.schema),
  ];
  return {
    root: byObject.get(root)!,
    nodes: [...byObject.values()],
    nodeOf,
    reaching,
    inPlace,
    children,
    ...(tooVaried ? { tooVaried: nodeOf(tooVaried)! } : {}),
  };
}

const REFERENCES = ['$ref', '$dynamicRef', '$recursiveRef'];

/** The schemas for the values below, by selector: see `Graph.children`. */
function children(s: Record<string, unknown>): [string, unknown][] {
  const named = isRecord(s.properties) ? Object.entries(s.properties) : [];
  return [
    ...named.map(([k, v]): [string, unknown] => [`k:${k}`, v]),
    [`k+${JSON.stringify(named.map(([k]) => k))}`, s.additionalProperties],
    ...(isRecord(s.patternProperties)
      ? Object.values(s.patternProperties).map((v): [string, unknown] => ['k*', v])
      : []),
    ...(Array.isArray(s.prefixItems) ? s.prefixItems.map((v, i): [string, unknown] => [`i:${i}`, v]) : []),
    ...(Array.isArray(s.items)
      ? s.items.map((v, i): [string, unknown] => [`i:${i}`, v])
      : [['i*', s.items] as [string, unknown]]),
    ...ANY_KEY.map((k): [string, unknown] => ['k*', s[k]]),
    ...ANY_ITEM.map((k): [string, unknown] => ['i*', s[k]]),
  ];
}

/**
 * Work following references may take, past which a schema is refused: each distinct stack a
 * schema is reached with counts its size (the anchors and resources it holds), each resolution
 * the schema's size (typebox's resolver walks all of it, parsing URLs on the way: 1.9 ms for one
 * `$ref` in a 120-object schema of ten `$id`s, on a loaded machine). Compiling the schema resolves
 * each `$ref` once per resource it is reached from, and check.ts allows at most 100,000 for `$ref`s
 * times size: this is twice that.
 */
const MAX_FOLLOW_WORK = 200_000;
/**
 * Distinct stacks one schema may be reached with (one per resource that refers to it, and per set
 * of `$dynamicAnchor`s in scope). Past it is a chain of bases that never ends: `{ "$id":
 * "b/s.json" }` reached again through `"../root.json#…"`, a level of `b/` deeper each time, on
 * which typebox's compile recurses until the stack runs out. Refused after 64 levels, not after
 * the work bound (0.85 s, each level's URLs and lists longer than the last).
 */
const MAX_STACKS_PER_SCHEMA = 64;

/**
 * What each reference lands on, as typebox resolves it when it compiles or checks the schema: its
 * own resolver (`Resolve`), from the stack the check has there (`$id` bases, the resource,
 * `$dynamicAnchor`s in scope), so a `$ref` relative to a nested `$id`, to an `$anchor`, a
 * `$dynamicRef`, a percent-encoded pointer into a nested resource lands where the check goes. The
 * schema is walked as the check walks it, from each distinct stack (a schema reached from two
 * resources resolves its references twice); the targets of a schema are the union over them.
 * A `patternProperties` value (and the `additionalProperties` beside one) is compiled on its own
 * (schema-patterns.ts), so it is walked from a stack of its own, as that root.
 */
function followReferences(
  root: Record<string, unknown>,
  size: number,
  refers: (schema: object) => boolean,
): { targets: Map<object, Set<object>>; tooVaried?: object } {
  const targets = new Map<object, Set<object>>();
  /** The copies typebox is given (the root with a `$schema`, a separate root), by what they copy. */
  const original = new Map<object, object>();
  const defs = rootDefinitions(root);
  const roots: object[] = [root];
  const seenRoots = new Set<object>(roots);
  const states = new Map<object, Set<string>>();
  const resolved = new Map<string, [unknown, XStack][]>();
  const text = JSON.stringify(root);
  const reads = { dynamic: text.includes('"$dynamicRef"'), recursive: text.includes('"$recursiveRef"') };
  let work = 0;
  for (const given of roots) {
    const copied = given === root ? root : (separateRoot(defs, given) as object);
    const { context, schema } = resolvedOnce(copied as TSchema);
    if (schema !== given) original.set(schema, given);
    if (copied !== given) original.set(copied, given);
    const pending: [unknown, XStack][] = [[schema, Stack(context, schema)]];
    while (pending.length > 0) {
      const [s, stack] = pending.pop()!;
      if (!isRecord(s)) continue;
      const from = original.get(s) ?? s;
      // Below a schema without a reference in it, nothing is resolved: the stack there is no matter.
      if (!refers(from)) continue;
      const current = withoutIds(NextStack(stack, s as TSchema));
      work += 1 + current.dynamicAnchors.length + current.resourceEntries.size;
      if (work > MAX_FOLLOW_WORK) return { targets, tooVaried: from };
      const key = stackKey(current, reads);
      const seen = states.get(s) ?? new Set<string>();
      if (seen.has(key)) continue;
      if (seen.size >= MAX_STACKS_PER_SCHEMA) return { targets, tooVaried: from };
      seen.add(key);
      states.set(s, seen);
      /** What a `$ref` lands on from a stack, by the `$ref` and the stack's key: a text repeated in a resource is resolved once. */
      const refTargets = (stack: XStack, ref: Record<string, unknown>, stackKey: string): [unknown, XStack][] => {
        const cacheKey = `${String(ref.$ref)}\n${stackKey}`;
        let found = resolved.get(cacheKey);
        if (!found) {
          const first = Resolve.Ref(stack, ref as never);
          found = [[first.schema, withoutIds(first.stack)]];
          // Whichever resources the path entered, none (above) or all: see `withoutIds`. Only a
          // target without an `$id` of its own can enter one.
          if (isRecord(first.schema) && typeof first.schema.$id !== 'string') {
            const every = Resolve.Ref({ ...stack, ids: EVERY_RESOURCE }, ref as never);
            found.push([every.schema, withoutIds(every.stack)]);
          }
          resolved.set(cacheKey, found);
        }
        return found;
      };
      const land = (target: unknown, next: XStack) => {
        if (!isRecord(target)) return;
        const to = original.get(target) ?? target;
        targets.set(from, (targets.get(from) ?? new Set()).add(to));
        pending.push([target, next]);
      };
      for (const keyword of REFERENCES) {
        if (typeof s[keyword] !== 'string') continue;
        work += size;
        if (work > MAX_FOLLOW_WORK) return { targets, tooVaried: from };
        try {
          if (keyword === '$ref') for (const [target, next] of refTargets(current, s, key)) land(target, next);
          else {
            const target =
              keyword === '$dynamicRef'
                ? Resolve.DynamicRef(current, s as never)
                : Resolve.RecursiveRef(current, s as never);
            land(target, { ...current, pendingResource: true });
          }
        } catch {
          // typebox's compile throws on it too (an `$id` no URL resolves against): check.ts reports that
        }
      }
      const separate = isRecord(s.patternProperties);
      for (const sub of applied(s, separate)) pending.push([sub, current]);
      if (!separate) continue;
      for (const sub of [...Object.values(s.patternProperties as object), s.additionalProperties])
        if (isRecord(sub) && !seenRoots.has(original.get(sub) ?? sub)) {
          seenRoots.add(original.get(sub) ?? sub);
          roots.push(original.get(sub) ?? sub);
        }
    }
  }
  return { targets };
}

/** The schemas `s` applies, to its value or below; not the ones compiled on their own beside `patternProperties`. */
function applied(s: Record<string, unknown>, separate: boolean): unknown[] {
  const below = separate ? { ...s, patternProperties: undefined, additionalProperties: undefined } : s;
  return [...sameValue(s), ...children(below).map(([, sub]) => sub)];
}

/** The schemas `s` applies to the value itself, but for references. */
function sameValue(s: Record<string, unknown>): unknown[] {
  return [
    ...IN_PLACE_ONE.map((k) => s[k]),
    ...IN_PLACE_LIST.flatMap((k) => (Array.isArray(s[k]) ? (s[k] as unknown[]) : [])),
    // typebox walks a map given as an array too (`dependentSchemas: [{ … }]`, key "0").
    ...IN_PLACE_MAP.flatMap((k) => (typeof s[k] === 'object' && s[k] !== null ? Object.values(s[k] as object) : [])),
  ];
}

/**
 * `ids` (the resources entered on the way) is read once by typebox: whether a `$ref` that lands in
 * the middle of a resource enters it again. Kept, it made every order in which a path met a set of
 * resources a state of its own: ten resources referring to each other took 4.9 s to be refused.
 * So it is dropped, and each `$ref` resolved both ways (none entered, every one entered): the
 * targets are a superset of what any path meets.
 */
function withoutIds(stack: XStack): XStack {
  return stack.ids.length === 0 ? stack : { ...stack, ids: [] };
}

const EVERY_RESOURCE = { includes: () => true } as unknown as XStack['ids'];

/**
 * A stack as far as resolving a reference reads it: anchors by the first of each name (and only
 * when a `$dynamicRef` reads them), the `$recursiveAnchor` only when a `$recursiveRef` does.
 */
function stackKey(stack: XStack, reads: { dynamic: boolean; recursive: boolean }): string {
  const anchors = new Map<string, number>();
  if (reads.dynamic)
    for (const anchor of stack.dynamicAnchors)
      if (!anchors.has(String(anchor.$dynamicAnchor))) anchors.set(String(anchor.$dynamicAnchor), identity(anchor));
  return JSON.stringify([
    stack.lexicalBase,
    stack.resourceBase,
    stack.referenceBase,
    identity(stack.lexicalSchema),
    !reads.recursive || stack.recursiveAnchor === undefined ? -1 : identity(stack.recursiveAnchor),
    stack.useResourceBaseForReference,
    stack.pendingResource,
    stack.enteredResource,
    [...anchors].sort(),
    [...stack.resourceEntries].map(([target, { base, root }]) => [identity(target), base, identity(root)]).sort(),
  ]);
}

const identities = new WeakMap<object, number>();
let nextIdentity = 0;
function identity(value: unknown): number {
  if (value === null || typeof value !== 'object') return -2;
  let id = identities.get(value);
  if (id === undefined) {
    id = nextIdentity++;
    identities.set(value, id);
  }
  return id;
}

/** The pointer of a schema on such a cycle, or undefined when the check grows with the value only. */
export function exponentialRecursion(schema: unknown): string | undefined {
  const graph = graphOf(schema);
  if (!graph) return undefined;
  const { nodeOf, reaching, inPlace, children } = graph;
  /** Paths (capped at 2) from `start` to each schema applied to the same value. */
  const closure = (start: Node): Map<Node, number> => {
    const counts = new Map<Node, number>();
    const stack: Node[] = [start];
    // Each pop is one path: past 2 into the same schema the count is what matters, not the paths.
    while (stack.length > 0) {
      const node = stack.pop()!;
      const seen = counts.get(node) ?? 0;
      if (seen >= 2) continue;
      counts.set(node, seen + 1);
      for (const sub of inPlace(node.schema)) {
        const next = nodeOf(sub);
        if (next) stack.push(next);
      }
    }
    return counts;
  };

  // The level graph: from each level schema, the paths into each level schema one value down, by
  // the selector of that value: `k<name>`, `i<index>`, or `k*` / `i*` for any key or any item.
  const ids = new Map<Node, number>();
  const edges: Edge[][] = [];
  const idOf = (node: Node): number => {
    let id = ids.get(node);
    if (id === undefined) {
      id = ids.size;
      ids.set(node, id);
      levelNodes.push(node);
      pending.push(node);
    }
    return id;
  };
  const levelNodes: Node[] = [];
  const pending: Node[] = [];
  idOf(graph.root);
  while (pending.length > 0) {
    const from = pending.pop()!;
    const out = new Map<string, Edge>();
    for (const [node, count] of closure(from))
      for (const [selector, sub] of children(node.schema)) {
        const to = nodeOf(sub);
        if (!to || !reaching.has(to)) continue;
        const key = `${idOf(to)} ${selector}`;
        const edge = out.get(key) ?? { to: idOf(to), selector, paths: 0 };
        edge.paths = Math.min(2, edge.paths + count);
        out.set(key, edge);
      }
    edges[idOf(from)] = [...out.values()];
  }
  const doubling = ambiguousCycle(edges);
  return doubling === undefined ? undefined : pointerOf(levelNodes[doubling]!);
}

/**
 * A schema whose check applies some schema to one value more than `limit` times, or applies a
 * schema to the very value it is checking again (a loop no value ends), with the pointer of that
 * schema; undefined when none does. References need not recurse to cost that: thirty definitions,
 * each an `allOf` (or `anyOf`, `oneOf`) of two references to the next, are 2^30 checks of one
 * string, and a 1 KB schema held the host's thread for seconds per call. A loop overflowed the
 * stack at each call. The count walks the schema as its check does, through every reference, each
 * schema met once per path; a reference back up to a schema on the path counts once, since
 * recursion through a value is the doubling check's matter (`exponentialRecursion`).
 */
export function overApplied(schema: unknown, limit: number): { pointer: string; loop: boolean } | undefined {
  const graph = graphOf(schema);
  if (!graph) return undefined;
  const { nodeOf, reaching, inPlace } = graph;
  // Only a schema with a reference at or below it can loop or fan out; below one without, the
  // check meets each schema once: its count is its size, found without listing what it applies.
  const size = sizesBelow(graph);
  const nodes = [...reaching];
  const ids = new Map(nodes.map((node, i) => [node, i]));
  const same = (node: Node): number[] => inPlace(node.schema).flatMap((sub) => ids.get(nodeOf(sub)!) ?? []);
  const part = components(nodes.length, (v) => same(nodes[v]!));
  const members = new Map<number, number>();
  for (const p of part) members.set(p, (members.get(p) ?? 0) + 1);
  for (let v = 0; v < nodes.length; v++)
    if (members.get(part[v]!)! > 1 || same(nodes[v]!).includes(v)) return { pointer: pointerOf(nodes[v]!), loop: true };

  const counted = countApplied(graph, size, limit);
  return counted.over ? { pointer: pointerOf(counted.over), loop: false } : undefined;
}

/**
 * How many schemas checking one value can meet at most, counted as `overApplied` counts them (each
 * reference followed, a schema on the path once), stopping past `limit`: the check's cost per
 * value (shared-validators.ts bounds values times this, for a call's input and a tool's data). A
 * schema without a reference meets each of its schemas once: its size.
 */
export function schemasMet(schema: unknown, limit: number): number {
  // The size counts what the count of schemas leaves out: each entry of an `enum` or `required`
  // is a step of the check too.
  const size = sizeOf(schema, limit).nodes;
  const graph = graphOf(schema);
  return graph ? size + countApplied(graph, sizesBelow(graph), limit).total : size;
}

/**
 * How many of the schemas one value can meet are `such` ones, counted as `schemasMet` counts
 * (through every reference), stopping past `limit`: the checks one string may meet that read it
 * and that the host cannot meter as they run (shared-validators.ts).
 */
export function suchSchemasMet(schema: unknown, limit: number, such: (s: Record<string, unknown>) => boolean): number {
  const graph = graphOf(schema);
  if (graph) {
    const weight = (node: Node) => (such(node.schema) ? 1 : 0);
    return countApplied(graph, sizesBelow(graph, weight), limit, weight).total;
  }
  // Without a reference the schema is a tree, each of its schemas met once at most.
  let count = 0;
  const stack = [schema];
  while (stack.length > 0 && count <= limit) {
    const s = stack.pop();
    if (s === null || typeof s !== 'object') continue;
    if (!Array.isArray(s) && such(s as Record<string, unknown>)) count++;
    for (const [key, sub] of Object.entries(s)) if (Array.isArray(s) || !DATA_KEYWORDS.has(key)) stack.push(sub);
  }
  return count;
}

/** The size of each schema without a reference at or below it: its schemas, each of `weight`. */
function sizesBelow(graph: Graph, weight: (node: Node) => number = () => 1): Map<Node, number> {
  const size = new Map<Node, number>();
  for (const node of graph.nodes) {
    if (node.data) continue; // data the check never applies costs nothing
    const w = weight(node);
    for (let n: Node | undefined = node; n && !graph.reaching.has(n); n = n.parent) size.set(n, (size.get(n) ?? 0) + w);
  }
  return size;
}

/** Schemas applied from the root, through every reference, each of `weight`; `over` is where the count passed `limit`. */
function countApplied(
  graph: Graph,
  size: Map<Node, number>,
  limit: number,
  weight: (node: Node) => number = () => 1,
): { total: number; over?: Node } {
  const { nodeOf, inPlace, children } = graph;
  const next = (node: Node): Node[] =>
    [...inPlace(node.schema), ...children(node.schema).map(([, sub]) => sub)].flatMap((sub) => nodeOf(sub) ?? []);
  const total = new Map<Node, number>();
  const onPath = new Set<Node>();
  const work: { node: Node; next: Node[]; i: number; sum: number }[] = [];
  const enter = (node: Node) => {
    onPath.add(node);
    work.push({ node, next: next(node), i: 0, sum: weight(node) });
  };
  enter(graph.root);
  while (work.length > 0) {
    const top = work[work.length - 1]!;
    if (top.i < top.next.length) {
      const sub = top.next[top.i++]!;
      const known = size.get(sub) ?? total.get(sub) ?? (onPath.has(sub) ? weight(sub) : undefined);
      if (known === undefined) enter(sub);
      else top.sum += known;
    } else {
      work.pop();
      onPath.delete(top.node);
      total.set(top.node, top.sum);
      if (work.length > 0) work[work.length - 1]!.sum += top.sum;
    }
    if (top.sum > limit) return { total: top.sum, over: top.node };
  }
  return { total: total.get(graph.root)! };
}

interface Edge {
  to: number;
  selector: string;
  /** Distinct paths along this edge, capped at 2. */
  paths: number;
}

/** Whether two selectors can pick the same value (see `children`). */
function overlap(a: string, b: string): boolean {
  if (a[0] !== b[0]) return false;
  if (a === b) return true;
  const wideA = a[1] !== ':';
  const wideB = b[1] !== ':';
  if (!wideA && !wideB) return false;
  if (wideA && wideB) return true;
  const [wide, one] = wideA ? [a, b] : [b, a];
  return wide[1] === '*' || !(JSON.parse(wide.slice(2)) as string[]).includes(one.slice(2));
}

/** At most this many pairs of level schemas are compared; a schema that needs more is refused as one that doubles. */
const MAX_PAIRS = 200_000;

/**
 * A level schema from which two distinct paths lead back to it through the same values: then
 * each round doubles the work (the automaton is exponentially ambiguous). Found on pairs of level
 * schemas walked together on overlapping selectors, within each cycle of the level graph: a pair
 * that splits (two different schemas, or one edge of two paths) and comes back together.
 */
function ambiguousCycle(edges: Edge[][]): number | undefined {
  const part = components(edges.length, (v) => edges[v]!.map((e) => e.to));
  const size = new Map<number, number>();
  for (const c of part) size.set(c, (size.get(c) ?? 0) + 1);
  let pairs = 0;
  for (let v = 0; v < edges.length; v++) {
    const c = part[v]!;
    const cyclic = size.get(c)! > 1 || edges[v]!.some((e) => e.to === v);
    if (!cyclic || (size.get(c) ?? 0) < 0) continue;
    size.set(c, -1); // each component once, from its first schema
    const members = part.flatMap((p, i) => (p === c ? [i] : []));
    const pairId = new Map<number, number>();
    const pairOf: [number, number][] = [];
    const idOfPair = (a: number, b: number): number => {
      const key = a * edges.length + b;
      let id = pairId.get(key);
      if (id === undefined) {
        id = pairOf.length;
        pairId.set(key, id);
        pairOf.push([a, b]);
      }
      return id;
    };
    for (const m of members) idOfPair(m, m);
    const next: number[][] = [];
    const splitting: Set<number>[] = [];
    for (let id = 0; id < pairOf.length; id++) {
      if (++pairs > MAX_PAIRS) return members[0];
      const [a, b] = pairOf[id]!;
      next[id] = [];
      splitting[id] = new Set();
      for (const ea of edges[a]!)
        for (const eb of edges[b]!) {
          if (part[ea.to] !== c || part[eb.to] !== c || !overlap(ea.selector, eb.selector)) continue;
          const to = idOfPair(ea.to, eb.to);
          next[id]!.push(to);
          // Two schemas walked, two edges taken, or one edge of two paths: the walks have parted.
          if (a !== b || ea !== eb || ea.paths > 1) splitting[id]!.add(to);
        }
    }
    const pairPart = components(pairOf.length, (id) => next[id]!);
    const hasDiagonal = new Set<number>();
    pairOf.forEach(([a, b], id) => {
      if (a === b) hasDiagonal.add(pairPart[id]!);
    });
    for (let id = 0; id < pairOf.length; id++)
      for (const to of splitting[id]!)
        if (pairPart[id] === pairPart[to] && hasDiagonal.has(pairPart[id]!)) return pairOf[id]![0];
  }
  return undefined;
}

/** The strongly connected component of each vertex: Tarjan's algorithm, iterative, since a schema may hold thousands. */
function components(count: number, next: (v: number) => number[]): number[] {
  const order = new Array<number>(count).fill(-1);
  const low = new Array<number>(count).fill(0);
  const part = new Array<number>(count).fill(-1);
  const onStack = new Array<boolean>(count).fill(false);
  const stack: number[] = [];
  let counter = 0;
  let parts = 0;
  for (let start = 0; start < count; start++) {
    if (order[start] !== -1) continue;
    const work: [number, number[], number][] = [];
    const enter = (v: number) => {
      order[v] = low[v] = counter++;
      stack.push(v);
      onStack[v] = true;
      work.push([v, next(v), 0]);
    };
    enter(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const [v, out] = top;
      if (top[2] < out.length) {
        const to = out[top[2]++]!;
        if (order[to] === -1) enter(to);
        else if (onStack[to]) low[v] = Math.min(low[v]!, order[to]!);
        continue;
      }
      work.pop();
      const parent = work[work.length - 1]?.[0];
      if (parent !== undefined) low[parent] = Math.min(low[parent]!, low[v]!);
      if (low[v] !== order[v]) continue;
      let popped: number;
      do {
        popped = stack.pop()!;
        onStack[popped] = false;
        part[popped] = parts;
      } while (popped !== v);
      parts++;
    }
  }
  return part;
}
