// A note's neighbourhood in the link graph, drawn as SVG in the page: the note in the middle, the notes it
// links to, the notes linking to it and its unresolved targets on a circle around it. Each note is a
// focusable link (Enter opens it); an unresolved target has no note to open.
import { el, svg } from "./dom.js";

const MAX_NEIGHBOURS = 24; // more would be unreadable: the lists beside the picture name them all
const RADIUS = 150;
const LABEL_CHARS = 22;

function short(text) {
  return text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text;
}

/** The neighbours, one per note (a note both linked to and from is one node, kind "both"). */
export function neighbours(links) {
  const byPath = new Map();
  for (const link of links.outlinks ?? []) byPath.set(link.note_path, { path: link.note_path, title: link.note_title, kind: "out" });
  for (const link of links.backlinks ?? []) {
    const known = byPath.get(link.note_path);
    if (known) known.kind = known.kind === "out" ? "both" : known.kind;
    else byPath.set(link.note_path, { path: link.note_path, title: link.note_title, kind: "in" });
  }
  byPath.delete(links.note_path); // a link to itself (a heading of its own) is not a neighbour
  const unresolved = new Map();
  for (const link of links.unresolved ?? []) unresolved.set(link.target, { path: null, title: link.target, kind: "unresolved" });
  return [...byPath.values(), ...unresolved.values()];
}

const LABELS = { out: "links to", in: "linked from", both: "linked both ways", unresolved: "unresolved" };

export function drawGraph(links, open) {
  const all = neighbours(links);
  const shown = all.slice(0, MAX_NEIGHBOURS);
  const picture = svg("svg", {
    viewBox: "-270 -200 540 400",
    class: "graph-svg",
    role: "group",
    "aria-label": `Link neighbourhood of ${links.note_title || links.note_path}: ${all.length} notes`,
  });
  const edges = svg("g", { class: "edges" });
  const nodes = svg("g", { class: "nodes" });
  picture.append(edges, nodes);
  shown.forEach((node, index) => {
    const angle = (2 * Math.PI * index) / Math.max(shown.length, 1) - Math.PI / 2;
    const x = Math.round(RADIUS * 1.45 * Math.cos(angle));
    const y = Math.round(RADIUS * Math.sin(angle));
    edges.append(svg("line", { x1: 0, y1: 0, x2: x, y2: y, class: `edge ${node.kind}` }));
    const group = svg(
      "g",
      { class: `node ${node.kind}`, transform: `translate(${x} ${y})`, "data-path": node.path ?? "" },
      svg("title", {}, `${node.title || node.path} (${LABELS[node.kind]})`),
      svg("circle", { r: 7 }),
      svg("text", { y: 20, "text-anchor": "middle" }, short(node.title || node.path)),
    );
    if (node.path) {
      group.setAttribute("tabindex", "0");
      group.setAttribute("role", "link");
      group.setAttribute("aria-label", `${node.title || node.path}, ${LABELS[node.kind]}`);
      group.addEventListener("click", () => open(node.path));
      group.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          open(node.path);
        }
      });
    }
    nodes.append(group);
  });
  nodes.append(
    svg(
      "g",
      { class: "node centre" },
      svg("circle", { r: 11 }),
      svg("text", { y: -18, "text-anchor": "middle" }, short(links.note_title || links.note_path)),
    ),
  );
  const legend = el(
    "p",
    { class: "legend meta" },
    el("span", { class: "key out" }, "links to"),
    " ",
    el("span", { class: "key in" }, "linked from"),
    " ",
    el("span", { class: "key both" }, "both ways"),
    " ",
    el("span", { class: "key unresolved" }, "unresolved"),
    all.length > shown.length ? ` · ${all.length - shown.length} more in the lists` : "",
  );
  const figure = el("figure", { class: "graph-figure" });
  figure.append(picture, legend);
  if (!all.length) figure.append(el("p", { class: "meta" }, "No links to or from this note."));
  return figure;
}
