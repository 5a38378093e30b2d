// The review page's lists on a store larger than one call reads, in headless Chromium against a
// real `serve --ui`: what a filter finds far down the list, and pages past the first.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { NewMemory } from "../../core/memory/record.js";
import { recordScopeFor } from "../../core/memory/scope.js";
import { contentHash } from "../../core/memory/write-policy.js";
import { SkillService } from "../../core/skills/service.js";
import { parseSkillMd } from "../../core/skills/skill-md.js";
import { skillMd } from "../skills/helpers.js";
import { openTestMemory, req, T0 } from "../helpers/memory.js";
import { FAILURES_DIR, REQUIRE_BROWSER, browserMissing, launchBrowser, screenshot, startUiServer, type Browser, type UiServer } from "./browser.js";

const missing = browserMissing();
const title = missing
  ? `review page lists in a real browser (${REQUIRE_BROWSER ? "required by INFINITY_MEMORY_REQUIRE_BROWSER=1 but" : "skipped:"} ${missing})`
  : "review page lists in a real browser (headless Chromium)";

/** more memories than the server reads in one trust-filtered call (20 store pages of 50) */
const MODEL_MEMORIES = 1100;
const CONFIRMED = "Alice confirmed that the on-call rotation changes every Monday";
/** more pending candidates than one call of the Pending view lists (100) */
const PENDING = 130;
const pendingText = (i: number) => `Candidate ${i}: the nightly export writes to bucket export-${i}`;

function memory(i: number, content: string, over: Partial<NewMemory> = {}): NewMemory {
  const id = `mem_seed_${String(i).padStart(5, "0")}`;
  return {
    id,
    lineageId: id,
    scope: recordScopeFor(req(), "user"),
    kind: "fact",
    content,
    tags: [],
    trust: "model_inferred",
    confidence: 0.6,
    status: "active",
    flags: [],
    version: 1,
    supersedes: null,
    validFrom: null,
    validTo: null,
    createdAt: T0 + i * 1000,
    expiresAt: null,
    contentHash: contentHash(content),
    source: { threadId: "root-1", messageIds: [], toolCallId: null, actor: "model", at: T0 + i * 1000 },
    ...over,
  };
}

async function seedLists(dir: string): Promise<string> {
  const ctx = openTestMemory(dir);
  try {
    const audit = (id: string) => ({ at: T0, actor: "test", action: "create" as const, targetKind: "memory" as const, targetId: id, detail: {} });
    // the one user-confirmed memory is the oldest: newest first, it comes after every other one
    const first = memory(0, CONFIRMED, { trust: "user_confirmed" });
    await ctx.backend.memory.insert(first, audit(first.id));
    for (let i = 1; i <= MODEL_MEMORIES; i++) {
      const m = memory(i, `Build ${i} of the service took ${i % 97} minutes on runner ${i % 13}`);
      await ctx.backend.memory.insert(m, audit(m.id));
    }
    for (let i = 1; i <= PENDING; i++) {
      const m = memory(MODEL_MEMORIES + i, pendingText(i), { status: "pending" });
      await ctx.backend.memory.insert(m, audit(m.id));
    }
    // a live skill the curator asks to retire: a request waits, no candidate version does
    const skills = new SkillService(ctx.backend.skills, ctx.clock, ctx.config);
    const v = (await skills.propose(parseSkillMd(skillMd("weekly-report", "Write the weekly status report.", "1. list the merged pull requests")), { actor: "cli:alice", author: "human", ref: "alice" })).version;
    await skills.publish(await skills.preparePublish("weekly-report"), "cli:alice");
    await ctx.backend.evolution.addRequest({ id: "srq_retire", kind: "retire", skillName: "weekly-report", versionId: v.id, otherSkill: null, policyId: null, reportId: null, detail: {}, createdAt: T0 });
    return ctx.dbPath;
  } finally {
    ctx.close();
  }
}

describe.skipIf(missing !== null && !REQUIRE_BROWSER)(title, () => {
  let home: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    if (missing) throw new Error(`INFINITY_MEMORY_REQUIRE_BROWSER=1 but ${missing}`);
    home = mkdtempSync(join(tmpdir(), "imem-ui-lists-"));
    const db = await seedLists(home);
    server = await startUiServer(home, db);
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

  it("memories: a trust only an old memory has finds it, not 'No memories with these filters'", async () => {
    await page.goto(`${server.base}#token=${server.token}`);
    const list = page.getByRole("region", { name: "Memory list" });
    await list.locator("tbody tr").first().waitFor();
    await page.getByLabel("Trust").selectOption("user_confirmed");
    await list.getByText(CONFIRMED).waitFor();
  });

  it("pending: more candidates than one page lists are reached with Show more", async () => {
    await page.goto(`${server.base}#token=${server.token}`);
    await page.getByRole("navigation", { name: "Views" }).getByRole("link", { name: "Pending" }).click();
    const panel = page.getByRole("region", { name: "Pending memories" });
    await panel.getByText(`${PENDING} waiting for a person's decision.`).waitFor();
    // oldest first: the first hundred, then the rest
    await panel.getByText(pendingText(1), { exact: true }).waitFor();
    expect(await panel.getByText(pendingText(PENDING), { exact: true }).count()).toBe(0);
    await panel.getByRole("button", { name: "Show more" }).click();
    await panel.getByText(pendingText(PENDING), { exact: true }).waitFor();
    expect(await panel.locator("li[data-memory-id]").count()).toBe(PENDING);
  });

  it("skills: a skill with only a retire request waiting says so in the catalog, not '0 candidate(s)'", async () => {
    await page.goto(`${server.base}#token=${server.token}`);
    await page.getByRole("navigation", { name: "Views" }).getByRole("link", { name: "Skills" }).click();
    const row = page.locator('tr[data-skill="weekly-report"]');
    await row.getByText("1 request(s)").waitFor();
    expect(await row.getByText("0 candidate(s)").count()).toBe(0);
  });

  it("memories: a search finds a pending candidate, as the 'active + pending' status filter says", async () => {
    await page.goto(`${server.base}#token=${server.token}`);
    const list = page.getByRole("region", { name: "Memory list" });
    await list.locator("tbody tr").first().waitFor();
    await page.getByLabel("Search").fill("nightly export bucket export-7");
    await page.getByLabel("Search").press("Enter");
    await list.getByText(pendingText(7), { exact: true }).waitFor();
    await page.getByLabel("Status").selectOption("pending");
    await list.getByText(pendingText(7), { exact: true }).waitFor();
  });
});
