// backup gave its finished copy the name asked for with link(), which FAT and exFAT (a USB stick,
// a camera card) and some network shares refuse (EPERM, ENOTSUP, EXDEV, ENOSYS): the backup failed
// there after copying everything. Now such a refusal falls back to an exclusive claim of the name
// and a rename over it, which still never replaces a file that has the name.
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { placeNoReplace } from "../../cli/temp-files.js";
import { tempDir } from "../helpers/tmp.js";

const refuse = (code: string) => () => {
  throw Object.assign(new Error(`${code}: operation not supported, link`), { code });
};

function finished(dir: string): string {
  const from = join(dir, ".b.db.123.partial");
  writeFileSync(from, "every memory", { mode: 0o600 });
  return from;
}

describe("placing a finished backup under its name", () => {
  it("links where the file system has hard links", () => {
    const dir = tempDir();
    const from = finished(dir);
    placeNoReplace(from, join(dir, "b.db"));
    expect(readFileSync(join(dir, "b.db"), "utf8")).toBe("every memory");
    expect(existsSync(from)).toBe(false);
  });

  it.each(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "ENOSYS"])("falls back to claim-and-rename when link() fails with %s, keeping the copy's mode", (code) => {
    const dir = tempDir();
    const from = finished(dir);
    placeNoReplace(from, join(dir, "b.db"), refuse(code));
    expect(readFileSync(join(dir, "b.db"), "utf8")).toBe("every memory");
    expect(statSync(join(dir, "b.db")).mode & 0o777).toBe(0o600);
    expect(existsSync(from)).toBe(false);
  });

  it("without hard links still never replaces a file that has the name", () => {
    const dir = tempDir();
    const from = finished(dir);
    writeFileSync(join(dir, "b.db"), "someone else's file");
    expect(() => placeNoReplace(from, join(dir, "b.db"), refuse("EPERM"))).toThrow(expect.objectContaining({ code: "EEXIST" }));
    expect(readFileSync(join(dir, "b.db"), "utf8")).toBe("someone else's file");
    expect(readFileSync(from, "utf8")).toBe("every memory");
  });

  it("another link failure is the caller's to report; a failed rename leaves no claim behind", () => {
    const dir = tempDir();
    const from = finished(dir);
    expect(() => placeNoReplace(from, join(dir, "b.db"), refuse("EACCES"))).toThrow(expect.objectContaining({ code: "EACCES" }));
    expect(existsSync(join(dir, "b.db"))).toBe(false);
    expect(() => placeNoReplace(join(dir, "gone.partial"), join(dir, "c.db"), refuse("ENOTSUP"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(existsSync(join(dir, "c.db"))).toBe(false);
  });
});
