// The few DOM shapes core/team/svg.ts uses of jsdom's window, named here because the DOM's own
// declarations would make every file of svc see the browser's globals (fetch bodies, timers).

export interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  replaceWith(node: DomNode): void;
}

export interface DomAttr {
  name: string;
  localName: string;
  namespaceURI: string | null;
  value: string;
}

export interface DomElement extends DomNode {
  localName: string;
  namespaceURI: string | null;
  attributes: ArrayLike<DomAttr>;
  firstElementChild: DomElement | null;
  ownerDocument: DomDocument;
  getElementsByTagName(name: string): ArrayLike<DomElement>;
}

export interface DomDocument {
  documentElement: DomElement;
  childNodes: ArrayLike<DomNode>;
  createTextNode(text: string): DomNode;
  createTreeWalker(root: DomNode, whatToShow: number): { nextNode(): DomNode | null; currentNode: DomNode };
}

export interface DomWindow {
  DOMParser: new () => { parseFromString(text: string, type: string): DomDocument };
  XMLSerializer: new () => { serializeToString(node: DomNode): string };
}

/** An entry of DOMPurify's `removed`: an element (or comment, processing instruction) or an attribute. */
export type Removal = { element: DomNode } | { attribute: DomAttr | null; from: DomElement };
