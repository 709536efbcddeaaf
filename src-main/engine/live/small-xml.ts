// A small, bounded XML tree for pings (RSS Ping 2.0 documents, XML-RPC calls), on saxes like the document reader:
// no DOCTYPE (so no entity is ever declared, let alone expanded or fetched), at most 32 levels, 10,000 nodes and
// 100 attributes an element, text per node capped, the first fault the end; names kept as written (local names and namespace URIs beside them).
import { SaxesParser } from 'saxes';

export interface XmlNode {
  /** Local name (without prefix). */
  name: string;
  uri: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

export class SmallXmlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SmallXmlError';
  }
}

const MAX_DEPTH = 32;
const MAX_NODES = 10_000;
const MAX_TEXT = 1 << 20;
const MAX_ATTRIBUTES = 100;

export function parseSmallXml(text: string): XmlNode {
  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: XmlNode[] = [];
  let root: XmlNode | null = null;
  let nodes = 0;
  // The first fault ends the parse: saxes goes on after an error, and a body of a million undeclared prefixes made
  // it build a million messages (seconds of the thread that serves the callback server) only for the first to be said.
  parser.on('error', (err) => {
    throw new SmallXmlError(`not well-formed XML (${err.message.replace(/^undefined:/, 'line ')})`);
  });
  parser.on('doctype', () => {
    throw new SmallXmlError('a DOCTYPE declaration: refused (no DTD is ever read)');
  });
  parser.on('opentag', (tag) => {
    if (++nodes > MAX_NODES) throw new SmallXmlError(`more than ${MAX_NODES.toLocaleString('en')} elements`);
    if (stack.length >= MAX_DEPTH) throw new SmallXmlError(`nested deeper than ${MAX_DEPTH} levels`);
    const attrs: Record<string, string> = {};
    const all = Object.values(tag.attributes);
    if (all.length > MAX_ATTRIBUTES) throw new SmallXmlError(`an element with more than ${MAX_ATTRIBUTES} attributes`);
    for (const a of all) {
      if (typeof a === 'string') continue;
      if (a.prefix === 'xmlns' || a.name === 'xmlns') continue;
      attrs[a.local] = a.value;
    }
    const node: XmlNode = { name: tag.local ?? tag.name, uri: tag.uri ?? '', attrs, children: [], text: '' };
    if (stack.length === 0) root = node;
    else stack[stack.length - 1].children.push(node);
    stack.push(node);
  });
  const onText = (t: string) => {
    const top = stack[stack.length - 1];
    if (!top) return;
    if (top.text.length + t.length > MAX_TEXT) throw new SmallXmlError(`a text over ${MAX_TEXT.toLocaleString('en')} characters`);
    top.text += t;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => void stack.pop());
  try {
    parser.write(text).close();
  } catch (err) {
    if (err instanceof SmallXmlError) throw err;
    throw new SmallXmlError(`not well-formed XML (${(err as Error).message.replace(/^undefined:/, 'line ')})`);
  }
  if (root === null) throw new SmallXmlError('no root element');
  return root;
}

export function child(node: XmlNode, name: string): XmlNode | undefined {
  return node.children.find((c) => c.name === name);
}

export function childText(node: XmlNode, name: string): string | null {
  const c = child(node, name);
  return c ? c.text.trim() : null;
}
