// The views: wings, search (the real recall), timeline, a new memory, health and identity.

import * as api from "./api.js";
import { h, put, when, short, memoryLink, num, field, select } from "./dom.js";
import { say, confirmAction, go, changed, getOverview, browsedWing } from "./main.js";
import { driftChart } from "./charts.js";

/** The wings of the store with their rooms, and what to do with each. */
export async function wingsView({ overview }) {
  const st = overview.status;
  const wings = Object.entries(st.by_wing);
  const byType = Object.entries(st.by_type).filter(([, n]) => n > 0);
  return h("section", { "aria-labelledby": "wings-title" },
    h("h1", { id: "wings-title" }, "Wings"),
    h("p", { class: "muted" },
      `${num(st.memories, 0)} memories in ${wings.length} wings · ${num(st.archived, 0)} archived · ${num(st.superseded, 0)} superseded · `,
      byType.map(([t, n]) => `${n} ${t}`).join(", ")),
    wings.length === 0
      ? h("p", {}, "No memory yet. ", h("a", { href: "#/store" }, "Store the first one"), " or let an agent do it.")
      : h("div", { class: "cards" }, wings.map(([wing, n]) => {
          const rooms = Object.entries(st.by_room).filter(([k]) => k.startsWith(wing + "/"));
          return h("article", { class: "card wing", dataset: { wing } },
            h("h2", {}, h("a", { href: "#/timeline?wing=" + encodeURIComponent(wing) }, wing), " ", h("span", { class: "count" }, String(n))),
            h("ul", { class: "rooms" }, rooms.map(([k, m]) => {
              const room = k.slice(wing.length + 1);
              return h("li", {},
                h("a", { href: `#/timeline?wing=${encodeURIComponent(wing)}&room=${encodeURIComponent(room)}` }, room),
                " ", h("span", { class: "count" }, String(m)));
            })),
            h("p", { class: "actions" },
              h("a", { href: "#/search?wing=" + encodeURIComponent(wing) }, "Search this wing"),
              h("a", { href: "#/timeline?wing=" + encodeURIComponent(wing) }, "Timeline"),
              h("a", { href: "#/store?wing=" + encodeURIComponent(wing) }, "New memory")));
        })));
}

/** The budget a search uses: the page's, else the configured default. */
function budgetOf(params, overview) {
  const b = Number(params.get("budget"));
  return Number.isFinite(b) && b > 0 ? Math.min(b, overview.max_budget) : overview.default_budget;
}

/** A search: the recall an agent gets for a query and a budget, item by item, then the block. */
export async function searchView({ params, overview }) {
  const query = params.get("q") || "";
  const wing = params.get("wing") || "";
  const budget = budgetOf(params, overview);
  const order = params.get("order") || "relevance";
  const q = h("input", { id: "q", type: "search", name: "q", value: query, required: true, autofocus: true, placeholder: "What are you looking for?", autocomplete: "off" });
  const range = h("input", { id: "budget-range", type: "range", min: 50, max: 8000, step: 50, value: Math.min(budget, 8000), "aria-label": "Budget (slider)" });
  const number = h("input", { id: "budget", type: "number", min: 1, max: overview.max_budget, value: budget, "aria-label": "Budget in tokens" });
  range.addEventListener("input", () => { number.value = range.value; });
  number.addEventListener("input", () => { range.value = number.value; });
  const wingSel = select({ id: "wing", name: "wing" }, [["", "all wings"], ...Object.keys(overview.status.by_wing)], wing);
  const orderSel = select({ id: "order", name: "order" }, [["relevance", "most relevant day first"], ["time", "oldest first"]], order);
  const form = h("form", { id: "search-form", class: "search", role: "search" },
    field("Query", q),
    h("div", { class: "budget" }, field("Budget (tokens)", h("span", { class: "pair" }, range, number))),
    field("Wing", wingSel),
    field("Order", orderSel),
    h("button", { type: "submit", class: "primary" }, "Recall"));
  const search = () => {
    const p = new URLSearchParams({ q: q.value, budget: number.value });
    if (wingSel.value) p.set("wing", wingSel.value);
    if (orderSel.value !== "relevance") p.set("order", orderSel.value);
    go("#/search?" + p);
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); search(); });
  range.addEventListener("change", () => { if (q.value.trim()) search(); });
  const out = h("div", { id: "results", "aria-live": "polite" });
  if (query.trim()) {
    try {
      put(out, recallResult(await api.get("recall", { query, budget, wing, order })));
    } catch (e) {
      put(out, h("p", { class: "error" }, e.message));
    }
  } else {
    put(out, h("p", { class: "muted" }, "Type what an agent would ask: you see exactly the context it would get, within the budget, and why each memory is in it."));
  }
  return h("section", { "aria-labelledby": "search-title" }, h("h1", { id: "search-title" }, "Search"), form, out);
}

/** Longest text a result shows; its page has the whole memory. */
const SHOWN_CHARS = 280;

/** What the block shows of a recalled item (its text, facts or header), without its id. */
function shownText(it) {
  const text = it.text.replace(/^\[[0-9a-f]+\]\s*/, "").trim();
  if (text.length <= SHOWN_CHARS) return text;
  const cut = text.slice(0, SHOWN_CHARS);
  return cut.slice(0, Math.max(cut.lastIndexOf(" "), SHOWN_CHARS / 2)) + " …";
}

function recallResult(r) {
  const rows = r.items.map((it, i) => h("tr", { dataset: { id: it.id } },
    h("td", { class: "num" }, String(i + 1)),
    h("td", { class: "memory-cell" },
      memoryLink(it.id, shownText(it)),
      h("div", { class: "meta" },
        h("code", {}, it.short_id), ` · ${it.memory_type} · ${it.wing} / ${it.room} · `,
        h("span", { class: "date" }, when(it.created_at)), " · ",
        h("span", { class: "mode " + it.mode }, it.mode), ` · ${it.tokens} tokens`,
        it.pinned ? h("span", { class: "badge" }, "pinned") : null)),
    h("td", { class: "rel" }, h("meter", { min: 0, max: 1, value: it.relevance, title: num(it.relevance, 3) }), " ", num(it.relevance, 3)),
    h("td", { class: "why" }, it.why)));
  return [
    h("p", { class: "summary" },
      `${r.items.length} memories · ${r.used} of ${r.budget} tokens · ${r.candidates} candidates · ${num(r.millis, 0)} ms`,
      r.fallback_wing ? ` · answered by fallback wing ${r.fallback_wing}` : ""),
    r.items.length === 0 ? h("p", {}, "Nothing recalled for this query.") : h("table", { class: "items results" },
      h("caption", {}, "Recalled memories, in the block's order, each as the block shows it (full text, facts or header)"),
      h("thead", {}, h("tr", {}, ["#", "Memory", "Relevance", "Why"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows)),
    h("h2", {}, "Context block, as the agent receives it"),
    h("pre", { id: "block", class: "block", tabindex: 0 }, r.text),
  ];
}

/** The timeline, filtered by wing, room, type and dates, page by page. */
export async function timelineView({ params, overview }) {
  const p = (k) => params.get(k) || "";
  const wingSel = select({ id: "tl-wing", name: "wing" }, [["", "all wings"], ...Object.keys(overview.status.by_wing)], p("wing"));
  const room = h("input", { id: "tl-room", name: "room", value: p("room"), placeholder: "any room" });
  const type = select({ id: "tl-type", name: "type" }, [["", "any type"], ...overview.types], p("type"));
  const since = h("input", { id: "tl-since", name: "since", type: "date", value: p("since") });
  const until = h("input", { id: "tl-until", name: "until", type: "date", value: p("until") });
  const archived = h("input", { id: "tl-archived", type: "checkbox", checked: p("archived") === "1" });
  const superseded = h("input", { id: "tl-superseded", type: "checkbox", checked: p("superseded") === "1" });
  const order = select({ id: "tl-order", name: "order" }, [["newest", "newest first"], ["oldest", "oldest first"]], p("order") || "newest");
  const source = select({ id: "tl-source", name: "source" }, [["", "any source"], ["stored", "stored"], ["captured", "captured by hooks"]], p("source"));
  const form = h("form", { id: "timeline-form", class: "filters" },
    field("Wing", wingSel), field("Room", room), field("Type", type), field("Since", since), field("Until", until),
    field("Source", source), field("Order", order),
    h("label", { class: "check" }, archived, " archived"),
    h("label", { class: "check" }, superseded, " superseded"),
    h("button", { type: "submit", class: "primary" }, "Show"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const [k, el] of [["wing", wingSel], ["room", room], ["type", type], ["since", since], ["until", until], ["source", source]]) if (el.value) q.set(k, el.value);
    if (order.value !== "newest") q.set("order", order.value);
    if (archived.checked) q.set("archived", "1");
    if (superseded.checked) q.set("superseded", "1");
    go("#/timeline?" + q);
  });
  const query = {
    wing: p("wing"), room: p("room"), type: p("type"), since: p("since"), until: p("until"), order: p("order"), source: p("source"),
    archived: p("archived") === "1", superseded: p("superseded") === "1", limit: 50,
  };
  const list = h("ol", { id: "timeline", class: "timeline" });
  const more = h("button", { type: "button", id: "more", hidden: true }, "Show more");
  const load = async (cursor) => {
    const page = await api.get("timeline", { ...query, cursor });
    for (const it of page.items) {
      list.append(h("li", { dataset: { id: it.id } },
        h("span", { class: "date" }, when(it.created_at)),
        h("span", { class: "wing" }, it.wing + " / " + it.room),
        h("span", { class: "type" }, it.memory_type),
        memoryLink(it.id, it.summary),
        it.source === "captured" ? h("span", { class: "badge captured" }, "captured") : null,
        it.archived ? h("span", { class: "badge" }, "archived") : null,
        it.superseded_by ? h("span", { class: "badge" }, "superseded") : null));
    }
    more.hidden = !page.next_cursor;
    more.onclick = () => load(page.next_cursor).catch((e) => say(e.message, "error"));
    if (!list.children.length) list.append(h("li", { class: "muted" }, "No memory matches these filters."));
  };
  await load();
  return h("section", { "aria-labelledby": "timeline-title" }, h("h1", { id: "timeline-title" }, "Timeline"), form, list, more);
}

/** A form to store a new memory, through the same use case as mira_store. */
export async function storeView({ params, overview }) {
  const content = h("textarea", { id: "new-content", rows: 6, required: true, autofocus: true, placeholder: "One self-contained statement: a decision and why, a fact, a preference…" });
  const wings = Object.keys(overview.status.by_wing);
  // The wing being browsed, else the only one; with several and none browsed, a choice to make.
  const chosen = params.get("wing") || browsedWing() || (wings.length === 1 ? wings[0] : "");
  const wing = h("input", { id: "new-wing", required: true, list: "wing-names", value: chosen, autocomplete: "off", placeholder: "a project, e.g. my-app" });
  const room = h("input", { id: "new-room", placeholder: "the type's room" });
  const type = select({ id: "new-type" }, [["", "classify from the text"], ...overview.types], "");
  const pinned = h("input", { id: "new-pinned", type: "checkbox" });
  const out = h("div", { id: "store-result", "aria-live": "polite" });
  const form = h("form", { id: "store-form", class: "stack" },
    field("Text", content),
    h("datalist", { id: "wing-names" }, wings.map((w) => h("option", { value: w }))),
    h("div", { class: "row" }, field("Wing", wing), field("Room", room), field("Type", type)),
    h("label", { class: "check" }, pinned, " pinned (shown in every recall of its wing)"),
    h("button", { type: "submit", class: "primary" }, "Store…"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!(await confirmAction(`Store this memory in wing "${wing.value}"?`, "Store"))) return;
    try {
      const r = await api.post("store", { content: content.value, wing: wing.value, room: room.value, type: type.value, pinned: pinned.checked });
      changed();
      put(out, h("p", { class: "ok" },
        r.stored ? "Stored " : "Already stored (the same text is in this wing): ",
        memoryLink(r.id), ` as ${r.memory_type} in ${r.wing} / ${r.room}`,
        r.links.length ? ` · ${r.links.length} causal link(s)` : "",
        r.superseded.length ? ` · supersedes ${r.superseded.map(short).join(", ")}` : "",
        r.redacted ? ` · ${r.redacted} secret(s) redacted` : ""));
      if (r.stored) content.value = "";
    } catch (err) {
      say(err.message, "error");
    }
  });
  return h("section", { "aria-labelledby": "store-title" }, h("h1", { id: "store-title" }, "New memory"), form, out);
}

/** Store and index health, and what this process did. */
export async function healthView() {
  const { status: st, metrics: m, read_only } = await getOverview(true);
  const i = st.index;
  const dl = (pairs) => h("dl", {}, pairs.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))]));
  return h("section", { "aria-labelledby": "health-title" },
    h("h1", { id: "health-title" }, "Health"),
    h("div", { class: "cards" },
      h("article", { class: "card" }, h("h2", {}, "Memories"), dl([
        ["All", num(st.memories, 0)], ["Archived", num(st.archived, 0)], ["Superseded", num(st.superseded, 0)],
        ["Causal edges", num(st.causal_edges, 0)], ["Tags", num(st.tags, 0)], ["Tokens (T0)", num(st.total_tokens, 0)]])),
      h("article", { class: "card", id: "index-health" }, h("h2", {}, "Vector index"), dl([
        ["Search", i.kind], ["Vectors", num(i.size, 0)], ["HNSW graph", i.ready ? "ready" : i.building ? "building" : "not built"],
        ["Saved to disk", i.persisted ? "yes" : "no"], ["Last rebuilt", i.last_rebuilt || "never"]])),
      h("article", { class: "card" }, h("h2", {}, "Store"), dl([
        ["Database", st.db_path], ["Size", num(st.db_bytes / 1048576, 1) + " MiB"], ["Schema", "v" + st.schema_version],
        ["Writable", read_only ? "no (read-only)" : "yes"], ["Config", st.config], ["Model", `${st.model} (${st.model_present ? "present" : "missing"})`],
        ["Version", st.version], ["Uptime", st.uptime_secs === undefined ? "" : st.uptime_secs + " s"]])),
      h("article", { class: "card" }, h("h2", {}, "Since start"), dl([
        ["Recalls", `${m.recalls} · mean ${num(m.recall_mean_ms, 1)} ms`], ["Budget used", num(m.budget_used_mean * 100, 0) + " % on average"],
        ["Stores", `${m.stores} · mean ${num(m.store_mean_ms, 1)} ms`], ["Embedding batches", `${m.embed_batches} · mean ${num(m.embed_mean_ms, 1)} ms`],
        ["MCP tool calls", `${m.tool_calls} (${m.tool_errors} failed)`]]))));
}

const AGENT_KEY = "mira.agent";

/** An agent's identity (SOUL): traits with their confidence and how it drifted, version by version. */
export async function soulView({ params, overview }) {
  if (!overview.soul) {
    return h("section", {}, h("h1", {}, "Identity"), h("p", {}, "SOUL is off: start mira with --with-soul (or soul.enabled: true) to see agents' identities."));
  }
  const agent = params.get("agent") || sessionStorage.getItem(AGENT_KEY) || "";
  const input = h("input", { id: "agent", value: agent, required: true, autofocus: true, placeholder: "agent id" });
  const form = h("form", { id: "soul-form", class: "filters" }, field("Agent", input), h("button", { type: "submit", class: "primary" }, "Show"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem(AGENT_KEY, input.value.trim());
    go("#/soul?agent=" + encodeURIComponent(input.value.trim()));
  });
  const section = h("section", { "aria-labelledby": "soul-title" }, h("h1", { id: "soul-title" }, "Identity"), form);
  if (!agent) return section;
  const { status, threshold, versions } = await api.get("soul", { agent });
  const id = status.identity;
  if (!id) {
    section.append(h("p", {}, `Nothing captured yet for ${agent}.`));
    return section;
  }
  const last = versions[versions.length - 1];
  section.append(
    h("p", { class: "muted" }, `Version ${id.version} of ${status.versions} · model ${id.model_id} · ${id.reason}`),
    status.summary ? h("details", {}, h("summary", {}, "What SOUL tells the agent about itself"), h("p", { class: "soul-summary" }, status.summary)) : null,
    h("h2", {}, "Traits"),
    h("table", { class: "items", id: "traits" },
      h("thead", {}, h("tr", {}, ["Trait", "Category", "Confidence", "Intensity", "Evidence", "Last seen in"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, id.traits.map((t) => h("tr", {},
        h("td", {}, t.name), h("td", {}, t.category),
        h("td", { class: "rel" }, h("meter", { min: 0, max: 1, value: t.confidence }), " ", num(t.confidence)),
        h("td", {}, num(t.intensity)), h("td", { class: "num" }, String(t.evidence_count)),
        h("td", { class: "why" }, t.last_evidence))))),
    h("h2", {}, "Drift, version by version"),
    driftChart(versions, threshold),
    last && last.drift !== null ? h("p", { class: last.significant ? "error" : "muted" },
      `Latest version drifted ${num(last.drift, 3)} from the one before (threshold ${num(threshold, 2)})${last.significant ? ": significant" : ""}.`) : null);
  return section;
}
