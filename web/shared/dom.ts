/**
 * Building the page's elements. Text from the network only ever goes into textContent
 * (or an attribute), never into markup.
 */
export type Child = Node | string | null | undefined | false;

export interface Props {
  text?: string;
  className?: string;
  [attribute: string]: string | undefined;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, kids?: readonly Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === undefined) continue;
    if (k === 'text') node.textContent = v;
    else if (k === 'className') node.className = v;
    else node.setAttribute(k, v);
  }
  append(node, kids ?? []);
  return node;
}

export function append(parent: Node, kids: readonly Child[]): void {
  for (const c of kids) if (c) parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}, text?: string): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The element with this id, of the expected kind; a page whose markup lacks it is a bug, said loudly. */
export function byId<T extends HTMLElement = HTMLElement>(id: string, kind?: new () => T): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  if (kind && !(node instanceof kind)) throw new Error(`#${id} is not a ${kind.name}`);
  return node as T;
}

export function clear(node: Node): void {
  node.textContent = '';
}

export function show(node: HTMLElement, visible: boolean): void {
  node.hidden = !visible;
}
