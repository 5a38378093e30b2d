// The review page end to end: a real `serve --ui` over a seeded SQLite file, driven in Debian's
// headless Chromium. Every change made through the page is checked in the database file itself.
// Screenshots: test-results/ui/ on failure; one of each main view (docs/screenshots/ with
// INFINITY_MEMORY_UPDATE_SCREENSHOTS=1, else test-results/ui/views/).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { FAILURES_DIR, REQUIRE_BROWSER, SCREENSHOTS_DIR, api, browserMissing, launchBrowser, screenshot, startUiServer, type Browser, type UiServer } from "./browser.js";
import { seed, type Seeded } from "./seed.js";

const missing = browserMissing();
const title = missing
  ? `review page in a real browser (${REQUIRE_BROWSER ? "required by INFINITY_MEMORY_REQUIRE_BROWSER=1 but" : "skipped:"} ${missing})`
  : "review page in a real browser (headless Chromium)";

function row<T>(db: string, sql: string, ...args: unknown[]): T | undefined {
  const d = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return d.prepare(sql).get(...args) as T | undefined;
  } finally {
    d.close();
  }
}

describe.skipIf(missing !== null && !REQUIRE_BROWSER)(title, () => {
  let home: string;
  let seeded: Seeded;
  let server: UiServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    if (missing) throw new Error(`INFINITY_MEMORY_REQUIRE_BROWSER=1 but ${missing}`);
    home = mkdtempSync(join(tmpdir(), "imem-ui-"));
    seeded = await seed(home);
    server = await startUiServer(home, seeded.db);
    browser = await launchBrowser();
    page = browser.page;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  beforeEach(({ task, onTestFailed }) => {
    onTestFailed(async () => {
      if (page) await screenshot(page, FAILURES_DIR, task.name).catch(() => undefined);
    });
  });

  // a fresh load per view, the way a person opens the printed address, then a click in the menu
  const open = async (view: string) => {
    await page.goto("about:blank");
    await page.goto(`${server.base}#token=${server.token}`);
    await page.getByRole("navigation", { name: "Views" }).getByRole("link", { name: view, exact: false }).click();
    await expect.poll(() => page.url()).toContain(`#/${view}`);
    await page.locator("#view-title").waitFor();
  };

  it("opens with the printed token, drops it from the address bar and goes live", async () => {
    await page.goto(`${server.base}#token=${server.token}`);
    await page.getByRole("heading", { name: "Memories", level: 2 }).waitFor();
    expect(page.url()).not.toContain(server.token);
    await page.getByRole("status").filter({ hasText: "live updates on" }).waitFor();
    // the page came from the server, with nothing from elsewhere
    const external = await page.evaluate(() => performance.getEntriesByType("resource").map((e) => e.name).filter((n) => !n.startsWith(location.origin)));
    expect(external).toEqual([]);
  });

  it("memories: seeded records, search, filters, a memory's versions", async () => {
    await open("memories");
    const list = page.getByRole("region", { name: "Memory list" });
    await list.getByText("The web app deploys to Fly.io from the main branch.").waitFor();
    await expect.poll(() => list.locator("tbody tr").count()).toBeGreaterThanOrEqual(5);

    await page.getByLabel("Kind").selectOption("lesson");
    await expect.poll(() => list.locator("tbody tr").count()).toBe(1);
    await list.getByText("Release notes go in CHANGELOG.md").waitFor();
    await page.getByLabel("Kind").selectOption("");

    await page.getByLabel("Search").fill("staging database");
    await page.getByLabel("Search").press("Enter");
    await list.getByText("PostgreSQL 16 since the October upgrade").waitFor();
    await list.getByRole("button", { name: /Open memory: The staging database runs PostgreSQL 16/ }).click();
    const detail = page.getByRole("region", { name: "Memory details" });
    await detail.getByRole("heading", { name: "Versions" }).waitFor();
    await detail.getByText("The staging database runs PostgreSQL 15.").waitFor();
    await detail.locator(".badge", { hasText: "superseded" }).first().waitFor();
    await screenshot(page, SCREENSHOTS_DIR, "memories");
  });

  it("correct: a new version replaces the text, the old one stays as history", async () => {
    await open("memories");
    const list = page.getByRole("region", { name: "Memory list" });
    await list.getByRole("button", { name: /Open memory: The web app deploys to Fly.io/ }).click();
    const detail = page.getByRole("region", { name: "Memory details" });
    await detail.getByRole("button", { name: "Correct…" }).click();
    const dialog = page.getByRole("dialog", { name: "Correct this memory" });
    await dialog.getByLabel("Content").fill("The web app deploys to Fly.io from the release branch.");
    await dialog.getByRole("button", { name: "Save as a new version" }).click();
    await dialog.waitFor({ state: "hidden" });
    await detail.getByTestId("memory-content").filter({ hasText: "from the release branch." }).waitFor();
    const d = new Database(seeded.db, { readonly: true });
    try {
      const rows = d.prepare("SELECT content, status, version FROM memories WHERE content LIKE 'The web app deploys to Fly.io%' ORDER BY version").all();
      expect(rows).toEqual([
        { content: "The web app deploys to Fly.io from the main branch.", status: "superseded", version: 1 },
        { content: "The web app deploys to Fly.io from the release branch.", status: "active", version: 2 },
      ]);
    } finally {
      d.close();
    }
  });

  it("forget: Escape cancels, the confirm step forgets it, and the store no longer holds it", async () => {
    await open("memories");
    const list = page.getByRole("region", { name: "Memory list" });
    await list.getByRole("button", { name: /Open memory: Alice's old laptop/ }).click();
    const detail = page.getByRole("region", { name: "Memory details" });
    const forget = detail.getByRole("button", { name: "Forget…" });
    await forget.focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Forget this memory?" });
    await dialog.waitFor();
    // the safe choice has the focus; Escape closes without a change
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect(row<{ status: string }>(seeded.db, "SELECT status FROM memories WHERE id = ?", seeded.forget.id)?.status).toBe("active");

    await forget.click();
    await dialog.getByLabel(/Reason/).fill("no longer true");
    await dialog.getByRole("button", { name: "Forget", exact: true }).click();
    await dialog.waitFor({ state: "hidden" });
    await expect.poll(() => list.getByText("Alice's old laptop was called orca.").count()).toBe(0);

    const stored = row<{ status: string; content: string }>(seeded.db, "SELECT status, content FROM memories WHERE id = ?", seeded.forget.id);
    expect(stored === undefined || (stored.status === "deleted" && !stored.content.includes("orca"))).toBe(true);
    expect(row(seeded.db, "SELECT id FROM memories WHERE content LIKE '%orca%'")).toBeUndefined();
    const audit = row<{ actor: string; detail: string }>(seeded.db, "SELECT actor, detail FROM audit_log WHERE action = 'forget' AND target_id = ?", seeded.forget.id);
    expect(audit).toBeDefined();
    expect(audit!.detail).not.toContain("orca");
  });

  it("pending: the candidate shows its source message; confirm makes it active and user-confirmed", async () => {
    await open("pending");
    const item = page.getByRole("listitem", { name: /Pending memory: .*squash/i });
    await item.locator("blockquote", { hasText: "Please remember that I prefer squash merges for release branches." }).waitFor();
    await screenshot(page, SCREENSHOTS_DIR, "pending");
    await item.getByRole("button", { name: /^Confirm/ }).click();
    await page.getByRole("status").filter({ hasText: "Confirmed" }).waitFor();
    const stored = row<{ status: string; trust: string }>(seeded.db, "SELECT status, trust FROM memories WHERE id = ?", seeded.pending.id);
    expect(stored).toEqual({ status: "active", trust: "user_confirmed" });
    await expect.poll(() => page.getByRole("listitem", { name: /Pending memory: .*squash/i }).count()).toBe(0);
  });

  it("pending: reject asks first, then forgets the candidate", async () => {
    await open("pending");
    const item = page.getByRole("listitem", { name: /Pending memory: .*tabs/i });
    await item.getByRole("button", { name: /^Reject/ }).click();
    const dialog = page.getByRole("dialog", { name: "Reject this pending memory?" });
    await dialog.getByRole("button", { name: "Reject and forget" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected and forgotten" }).waitFor();
    expect(row(seeded.db, "SELECT id FROM memories WHERE content LIKE '%tabs over spaces%'")).toBeUndefined();
    const stored = row<{ status: string }>(seeded.db, "SELECT status FROM memories WHERE id = ?", seeded.reject.id);
    expect(stored === undefined || stored.status === "deleted").toBe(true);
  });

  it("skills: reject a model's bare candidate with a reason", async () => {
    await open("skills");
    const cand = page.locator('[data-candidate="lint-fix"]');
    await cand.getByText("No evaluation report.").waitFor();
    await cand.getByRole("button", { name: /^Reject/ }).click();
    const dialog = page.getByRole("dialog", { name: /Reject lint-fix v1/ });
    await dialog.getByLabel(/Reason/).fill("CI has no lint job");
    await dialog.getByRole("button", { name: "Reject", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Rejected lint-fix v1" }).waitFor();
    expect(row(seeded.db, "SELECT status FROM skill_versions WHERE id = ?", seeded.bare.versionId)).toEqual({ status: "rejected" });
    expect(row(seeded.db, "SELECT published_version_id FROM skills WHERE name = 'lint-fix'")).toEqual({ published_version_id: null });
  });

  it("skills: the candidate's eval report and diff; approve publishes it", async () => {
    await open("skills");
    const cand = page.locator(`[data-candidate="${seeded.candidate.skillName}"]`);
    await cand.getByText("passed the gate").waitFor();
    await cand.getByText("Diff from the published version").click();
    await cand.locator(".dl.add").first().waitFor();
    await screenshot(page, SCREENSHOTS_DIR, "skills");
    expect(row(seeded.db, "SELECT published_version_id FROM skills WHERE name = ?", seeded.candidate.skillName)).toEqual({ published_version_id: null });
    await cand.getByRole("button", { name: /^Approve/ }).click();
    await page.getByRole("status").filter({ hasText: "Approved" }).waitFor();
    expect(row(seeded.db, "SELECT published_version_id FROM skills WHERE name = ?", seeded.candidate.skillName)).toEqual({ published_version_id: seeded.candidate.versionId });
    expect(row(seeded.db, "SELECT status FROM skill_versions WHERE id = ?", seeded.candidate.versionId)).toEqual({ status: "probationary" });
    expect(row(seeded.db, "SELECT status FROM skill_requests WHERE id = ?", seeded.candidate.requestId)).toEqual({ status: "approved" });
  });

  it("skills: versions, diff, η and trials charts; roll back after a confirm step", async () => {
    await open("skills");
    await page.getByRole("button", { name: "deploy-checklist", exact: true }).click();
    const detail = page.getByRole("region", { name: "Skill details" });
    await detail.getByRole("heading", { name: /deploy-checklist/, level: 3 }).waitFor();
    await detail.locator('pre.diff .dl.add', { hasText: "Take a database backup." }).waitFor();
    await detail.getByRole("img", { name: /Trials of deploy-checklist/ }).waitFor();
    await screenshot(page, SCREENSHOTS_DIR, "skill-detail", detail);

    await detail.getByRole("button", { name: "Roll back…" }).click();
    const dialog = page.getByRole("dialog", { name: /Roll deploy-checklist back/ });
    await dialog.getByRole("button", { name: "Roll back to v1" }).click();
    await dialog.waitFor({ state: "hidden" });
    await expect.poll(() => row<{ p: string }>(seeded.db, "SELECT published_version_id AS p FROM skills WHERE name = 'deploy-checklist'")?.p).toBe(seeded.rollback.v1);
    expect(row(seeded.db, "SELECT action FROM audit_log WHERE target_id = 'deploy-checklist' ORDER BY seq DESC LIMIT 1")).toEqual({ action: "rollback" });
  });

  it("skills: disable for one project, then clear it; the toggle table follows", async () => {
    await open("skills");
    await page.getByRole("button", { name: "deploy-checklist", exact: true }).click();
    const detail = page.getByRole("region", { name: "Skill details" });
    await detail.getByLabel("Scope").selectOption("project");
    await detail.getByLabel("Project path").fill("/work/app");
    await detail.getByRole("button", { name: "Disable", exact: true }).click();
    await detail.getByText("disabled for project /work/app").waitFor();
    const toggle = () =>
      row<{ level: string; enabled: number; key: string }>(seeded.db, "SELECT t.level, t.enabled, t.scope_key AS key FROM skill_toggles t JOIN skills s ON s.id = t.skill_id WHERE s.name = 'deploy-checklist' AND t.level = 'project'");
    expect(toggle()).toEqual({ level: "project", enabled: 0, key: expect.stringContaining("/work/app") });
    await detail.getByRole("button", { name: "Enable", exact: true }).click();
    await detail.getByText("enabled for project /work/app").waitFor();
    expect(toggle()).toEqual({ level: "project", enabled: 1, key: expect.stringContaining("/work/app") });
  });

  it("live: a change made by another process (the CLI) shows up without a reload", async () => {
    await open("skills");
    await page.getByRole("button", { name: "deploy-checklist", exact: true }).click();
    const detail = page.getByRole("region", { name: "Skill details" });
    await detail.getByRole("button", { name: "Pin" }).waitFor();
    const r = runCli(["skills", "pin", "deploy-checklist", "--db", seeded.db], { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice", INFINITY_HOME: join(home, "none") });
    expect(r.status, r.stderr).toBe(0);
    await detail.getByRole("button", { name: "Unpin" }).waitFor({ timeout: 8000 });
    expect(row(seeded.db, "SELECT pinned FROM skills WHERE name = 'deploy-checklist'")).toEqual({ pinned: 1 });
  });

  it("learning overview: episodes, reward distribution, policies and the skill funnel", async () => {
    await open("learning");
    const episodes = row<{ n: number }>(seeded.db, "SELECT COUNT(*) AS n FROM learning_episodes")!.n;
    expect(episodes).toBeGreaterThan(0);
    const card = page.getByRole("region", { name: "Episodes" });
    await card.locator(".stat", { hasText: String(episodes) }).waitFor();
    await page.getByRole("img", { name: /Episode rewards in ten bins/ }).waitFor();
    await page.getByRole("img", { name: /Skill funnel: proposed [1-9]/ }).waitFor();
    await page.getByRole("region", { name: "Policies" }).locator("tbody tr").first().waitFor();
    await screenshot(page, SCREENSHOTS_DIR, "learning");
  });

  it("audit timeline: the page's changes are recorded, filterable by kind", async () => {
    await open("audit");
    const log = page.getByRole("region", { name: "Audit log" });
    for (const action of ["forget", "rollback", "pin"]) await log.locator(`li[data-action="${action}"]`).first().waitFor();
    await screenshot(page, SCREENSHOTS_DIR, "audit");
    await page.getByLabel("What").selectOption("memory");
    await expect.poll(() => log.locator('li[data-action="rollback"]').count()).toBe(0);
    await log.locator('li[data-action="forget"]').first().waitFor();
  });

  it("errors from the API are shown inline, never dropped", async () => {
    // a stale decision: the request was already approved above
    const again = await api<{ code: string }>(server, "SkillAdmin/ApproveCandidate", { requestId: seeded.candidate.requestId });
    expect(again.status).toBe(409);
    // a wrong token: the views say so in place
    await page.goto("about:blank");
    await page.goto(`${server.base}#token=${"0".repeat(64)}`);
    await page.getByRole("alert").filter({ hasText: /Could not load memories: .*401/ }).waitFor();
    await page.getByRole("status").filter({ hasText: "token refused" }).waitFor();
    // restore the good token for any later test
    await page.goto("about:blank");
    await page.goto(`${server.base}#token=${server.token}`);
    await page.getByRole("status").filter({ hasText: "live updates on" }).waitFor();
  });

  it("keyboard: every control is reachable with Tab and shows a visible focus ring", async () => {
    await open("memories");
    // a fresh load (token from the tab's session storage), so Tab starts at the top
    await page.reload();
    await page.getByRole("region", { name: "Memory list" }).locator("tbody tr").first().waitFor();
    const seen: { label: string; outline: string }[] = [];
    for (let i = 0; i < 16; i++) {
      await page.keyboard.press("Tab");
      seen.push(
        await page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          const cs = getComputedStyle(el);
          const own = (el as HTMLInputElement).labels?.[0]?.firstElementChild?.textContent;
          const label = el.getAttribute("aria-label") ?? own ?? el.textContent ?? "";
          return { label: `${el.tagName.toLowerCase()}:${label.trim().slice(0, 40)}`, outline: `${cs.outlineStyle} ${cs.outlineWidth}` };
        }),
      );
    }
    const labels = seen.map((s) => s.label);
    for (const want of ["a:Skip to content", "a:Memories", "a:Pending", "a:Skills", "a:Learning", "a:Audit", "input:Search", "select:Scope"]) expect(labels).toContain(want);
    for (const s of seen) expect(s.outline, s.label).toMatch(/^solid [1-9]/);
    // and nothing went wrong in the page along the way (CSP violations and script errors land here)
    expect(browser.problems.filter((p) => !/401|Unauthorized/.test(p))).toEqual([]);
  });
});
