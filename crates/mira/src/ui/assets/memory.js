// A memory's page: its text (T0), fingerprint (T1), tags, causal links (added and removed by
// hand too), supersession chain (marked and undone by hand too), dates, its causal
// neighbourhood drawn, and the actions on it (each confirmed first).

import * as api from "./api.js";
import { h, put, when, short, memoryLink, num, field, select } from "./dom.js";
import { say, flash, confirmAction, go, changed, browsing } from "./main.js";
import { causalGraph } from "./charts.js";

/** Depth of the neighbourhood drawn around a memory. */
const GRAPH_DEPTH = 2;

/** The links of `m` one way (`edges`), each with a button removing it unless read-only. */
function linkList(id, title, edges, m, overview, empty) {
  const byId = new Map(m.linked.map((l) => [l.id, l]));
  return h("div", { class: "links", id },
    h("h3", {}, title),
    edges.length === 0 ? h("p", { class: "muted" }, empty) : h("ul", {}, edges.map((e) => {
      const l = byId.get(e.id);
      return h("li", { dataset: { id: e.id, relation: e.relation } },
        memoryLink(e.id, l ? l.summary : short(e.id)),
        h("span", { class: "muted" }, ` — ${e.relation}, confidence ${num(e.confidence)}`),
        l ? h("span", { class: "muted" }, ` · ${l.type} · ${when(l.created_at)}`) : null,
        overview.read_only ? null : h("button", { type: "button", class: "unlink", "aria-label": `Unlink ${short(e.id)}`, onclick: () => act(
          `Remove the link (${e.relation}) between memory ${m.short_id} and memory ${short(e.id)}? Both memories stay.`,
          "Unlink", "unlink", { from: m.id, to: e.id, relation: e.relation }, "Unlinked.") }, "Unlink…"));
    })));
}

/** Links this memory to another one, which it led to or follows from. */
function linkForm(m, overview) {
  if (overview.read_only) return null;
  const way = select({ id: "link-way" }, [["to", "led to"], ["from", "follows from"]], "to");
  const other = h("input", { id: "link-other", required: true, placeholder: "its id, as the timeline or a search shows it", autocomplete: "off" });
  const relation = select({ id: "link-relation" }, overview.relations, overview.relations[0]);
  const form = h("form", { id: "link-form", class: "filters" },
    field(`Memory ${m.short_id}`, way), field("Other memory", other), field("Relation", relation),
    h("button", { type: "submit" }, "Link…"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const id = other.value.trim();
    const [from, to] = way.value === "to" ? [m.id, id] : [id, m.id];
    act(`Link memory ${short(from)} to memory ${short(to)}, which follows from it (${relation.value})?`,
      "Link", "link", { from, to, relation: relation.value }, "Linked.");
  });
  return form;
}

function versionList(title, lines) {
  if (!lines.length) return null;
  return h("div", { class: "links" }, h("h3", {}, title), h("ol", {}, lines.map((l) =>
    h("li", {}, memoryLink(l.id, l.summary), h("span", { class: "muted" }, ` · ${when(l.created_at)}${l.archived ? " · archived" : ""}`)))));
}

/** Which memory supersedes `m`, linked, with a button making `m` current again. */
function supersededBy(m, overview) {
  if (!m.superseded_by) return null;
  const next = m.later_versions.find((l) => l.id === m.superseded_by);
  return h("p", { id: "superseded-by", class: "notice" },
    "Superseded by ", memoryLink(m.superseded_by, next ? next.summary : short(m.superseded_by)),
    next ? h("span", { class: "muted" }, ` (${when(next.created_at)})`) : null,
    ": recall shows that memory, and this one only as a header after it. ",
    overview.read_only ? null : h("button", { type: "button", id: "act-unsupersede", onclick: () => act(
      `Make memory ${m.short_id} current again? It will no longer be superseded by memory ${short(m.superseded_by)}.`,
      "Undo", "supersede", { old: m.id, new: m.superseded_by, undo: true }, `Memory ${m.short_id} is current again.`) }, "Undo…"));
}

/** Marks `m` as superseded by a newer memory: one mira finds about the same thing, or any id. */
function supersedeForm(m, overview) {
  if (overview.read_only || m.archived || m.superseded_by) return null;
  const other = h("input", { id: "supersede-new", required: true, placeholder: "the newer memory's id, as the timeline or a search shows it", autocomplete: "off" });
  const reason = h("input", { id: "supersede-reason", maxlength: 1000, placeholder: "optional, kept in mira's log" });
  const mark = (id) => act(
    `Mark memory ${m.short_id} as superseded by memory ${short(id)}? Recall will show the newer one, and this one only as a header after it. It can be undone.`,
    "Supersede", "supersede", { old: m.id, new: id, reason: reason.value.trim() || undefined }, `Memory ${m.short_id} is superseded.`);
  const form = h("form", { id: "supersede-form", class: "filters" },
    field("Newer memory", other), field("Reason", reason), h("button", { type: "submit" }, "Supersede…"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    mark(other.value.trim());
  });
  return h("div", { id: "supersede", class: "links" },
    h("h3", {}, "Replaced by a newer memory?"),
    m.may_replace.length
      ? h("ul", { id: "supersede-candidates" }, m.may_replace.map((l) => h("li", { dataset: { id: l.id } },
        memoryLink(l.id, l.summary), h("span", { class: "muted" }, ` · ${l.type} · ${when(l.created_at)} `),
        h("button", { type: "button", class: "supersede", "aria-label": `Superseded by ${l.short_id}`, onclick: () => mark(l.id) }, "Superseded by this…"))))
      : h("p", { class: "muted" }, "mira finds no newer memory of this wing about the same thing: give one's id."),
    form);
}

function fingerprintList(fp) {
  const rows = [
    ["Subjects", fp.subjects], ["Entities", (fp.entities || []).map((e) => `${e.text} (${e.kind})`)],
    ["Decision", fp.decision], ["Rejected", fp.rejected], ["Reasons", fp.reasons], ["Assignee", fp.assignee],
    ["Approvals", fp.approvals], ["Deadline", fp.deadline], ["Key facts", fp.key_facts],
  ].filter(([, v]) => v && (!Array.isArray(v) || v.length));
  return h("dl", { class: "fingerprint" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, Array.isArray(v) ? v.join(" · ") : v)]));
}

/** Runs an action after confirmation, then re-renders the page (or goes to `after`). */
async function act(question, okLabel, path, body, done, after) {
  if (!(await confirmAction(question, okLabel))) return;
  try {
    await api.post(path, body);
    changed();
    flash(done);
    go(after || location.hash);
  } catch (e) {
    say(e.message, "error");
  }
}

function actions(m, overview) {
  if (overview.read_only) return h("p", { class: "muted" }, "The store is read-only: nothing can be changed here.");
  const label = `memory ${m.short_id}`;
  return h("div", { class: "actions", role: "group", "aria-label": "Actions" },
    h("button", { type: "button", id: "act-pin", onclick: () => act(
      m.pinned ? `Unpin ${label}? It will compete on relevance again.` : `Pin ${label}? It will be shown in every recall of wing ${m.wing}.`,
      m.pinned ? "Unpin" : "Pin", "pin", { id: m.id, pinned: !m.pinned }, m.pinned ? "Unpinned." : "Pinned.") }, m.pinned ? "Unpin" : "Pin"),
    m.archived
      ? h("button", { type: "button", id: "act-restore", onclick: () => act(`Restore ${label} to recall?`, "Restore", "restore", { id: m.id }, "Restored.") }, "Restore")
      : h("button", { type: "button", id: "act-archive", onclick: () => act(`Archive ${label}? It leaves recall but stays here, and can be restored.`, "Archive", "archive", { id: m.id }, "Archived.") }, "Archive"),
    h("button", { type: "button", id: "act-edit", "aria-expanded": "false", "aria-controls": "edit-form", onclick: (e) => {
      const form = document.getElementById("edit-form");
      form.hidden = !form.hidden;
      e.currentTarget.setAttribute("aria-expanded", String(!form.hidden));
      if (!form.hidden) form.querySelector("input").focus();
    } }, "Edit wing, room or type"),
    h("button", { type: "button", id: "act-forget", class: "danger", onclick: () => act(
      `Forget ${label} for good? Its text, fingerprint, embedding, tags and causal links are deleted. This cannot be undone.`,
      "Forget", "forget", { id: m.id }, `Forgot ${label}.`, "#/timeline?wing=" + encodeURIComponent(m.wing)) }, "Forget…"));
}

function editForm(m, overview) {
  const wing = h("input", { id: "edit-wing", value: m.wing, required: true });
  const room = h("input", { id: "edit-room", value: m.room, required: true });
  const type = select({ id: "edit-type" }, overview.types, m.type);
  const form = h("form", { id: "edit-form", class: "filters", hidden: true },
    field("Wing", wing), field("Room", room), field("Type", type),
    h("button", { type: "submit", class: "primary" }, "Save…"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    act(`File memory ${m.short_id} under ${wing.value} / ${room.value} as ${type.value}?`, "Save", "edit",
      { id: m.id, wing: wing.value, room: room.value, type: type.value }, "Saved.");
  });
  return form;
}

/** The page of memory `arg` (its id). */
export async function memoryView({ arg, overview }) {
  let m;
  try {
    m = await api.get("memory", { id: arg });
  } catch (e) {
    if (e.status !== 404 && e.status !== 400) throw e;
    return h("section", { id: "no-memory", "aria-labelledby": "no-memory-title" },
      h("h1", { id: "no-memory-title" }, "No such memory"),
      h("p", {}, e.message),
      h("p", {}, h("a", { href: "#/search" }, "Search"), " or browse the ", h("a", { href: "#/timeline" }, "timeline"), " to find it."));
  }
  browsing(m.wing);
  const graph = h("div", { id: "graph", class: "graph" }, h("p", { class: "muted" }, "Drawing the causal neighbourhood…"));
  api.get("graph", { id: m.id, depth: GRAPH_DEPTH })
    .then((chain) => put(graph, causalGraph(chain)))
    .catch((e) => put(graph, h("p", { class: "error" }, e.message)));
  const badges = [
    m.pinned ? h("span", { class: "badge" }, "pinned") : null,
    m.source === "captured" ? h("span", { class: "badge captured", title: "kept by a client hook from session " + (m.session_id || "?") }, "captured") : null,
    m.archived ? h("span", { class: "badge" }, "archived") : null,
    m.superseded_by ? h("span", { class: "badge" }, "superseded") : null,
  ];
  const replaceForm = supersedeForm(m, overview);
  return h("article", { class: "memory", "aria-labelledby": "memory-title", dataset: { id: m.id } },
    h("h1", { id: "memory-title" }, `${m.type} `, h("code", {}, m.short_id), " ", badges),
    h("p", { class: "meta" },
      h("a", { href: "#/timeline?wing=" + encodeURIComponent(m.wing) }, m.wing), " / ", m.room,
      ` · happened ${when(m.created_at)} · stored ${when(m.stored_at)} · ${m.token_count} tokens · id `, h("code", {}, m.id)),
    supersededBy(m, overview),
    actions(m, overview),
    editForm(m, overview),
    h("h2", {}, "Text (T0)"),
    h("pre", { id: "memory-content", class: "content", tabindex: 0 }, m.content),
    h("h2", {}, "Fingerprint (T1)"),
    h("p", {}, h("code", { id: "fingerprint-text" }, m.fingerprint_text)),
    fingerprintList(m.fingerprint),
    h("h2", {}, "Tags"),
    m.tags.length ? h("ul", { class: "tags" }, m.tags.map((t) => h("li", { title: t.kind }, t.tag))) : h("p", { class: "muted" }, "No tags."),
    h("h2", {}, "Causal links"),
    h("div", { class: "two" },
      linkList("causes", "Caused by", m.causes, m, overview, "No recorded cause."),
      linkList("consequences", "Led to", m.consequences, m, overview, "No recorded consequence.")),
    linkForm(m, overview),
    h("h2", {}, "Causal neighbourhood"),
    graph,
    m.earlier_versions.length || m.later_versions.length || replaceForm ? [
      h("h2", {}, "Supersession"),
      m.replaced_slot ? h("p", {}, `Replaced because ${m.replaced_slot}.`) : null,
      h("div", { class: "two" },
        versionList("Replaces (earlier versions)", m.earlier_versions),
        versionList("Replaced by (later versions)", m.later_versions)),
      replaceForm,
    ] : null);
}
