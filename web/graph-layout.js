// The recursion graph's layout, in a module worker so that a big book never blocks the page:
// dagre (@dagrejs/dagre, vendored by scripts/build-web) places the entries in layers, left to
// right along the edges, and routes the edges. The page draws what comes back.
//
// Message in: {id, nodes: [{entry, width, height}], edges: [{from, to}]}.
// Message out: {id, width, height, nodes: [{entry, x, y}] (centres), edges: [{from, to, points:
// [{x, y}]}]}, or {id, error}.
import { Graph, layout } from './vendor/dagre.esm.js';

self.addEventListener('message', (event) => {
  const { id, nodes, edges } = event.data;
  try {
    const g = new Graph({ multigraph: false });
    g.setGraph({ rankdir: 'LR', nodesep: 12, ranksep: 48, marginx: 8, marginy: 8 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const n of nodes) g.setNode(String(n.entry), { width: n.width, height: n.height });
    for (const e of edges) g.setEdge(String(e.from), String(e.to));
    layout(g);
    const size = g.graph();
    self.postMessage({
      id,
      width: size.width || 0,
      height: size.height || 0,
      nodes: nodes.map((n) => {
        const p = g.node(String(n.entry));
        return { entry: n.entry, x: p.x, y: p.y };
      }),
      edges: edges.map((e) => ({ from: e.from, to: e.to, points: g.edge(String(e.from), String(e.to)).points })),
    });
  } catch (e) {
    self.postMessage({ id, error: String((e && e.message) || e) });
  }
});
