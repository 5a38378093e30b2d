// What the context prefix offers of the skill catalog: the few enabled, published, trusted
// skills matching the task, each with what it takes to load it (progressive disclosure level 0).
import type { RequestScope } from "../memory/scope.js";
import type { SkillService } from "./service.js";

export interface SkillOffer {
  name: string;
  description: string;
  /** the published version's number */
  version: number;
  versionId: string;
  /** share of the task's words the skill matches, 0..1 */
  score: number;
  pinned: boolean;
  /** the published body, for inlining when it fits */
  body: string;
}

export interface SkillOfferSource {
  offer(scope: RequestScope, task: string, limit: number): Promise<SkillOffer[]>;
}

export class CatalogOffers implements SkillOfferSource {
  constructor(private readonly service: SkillService) {}

  async offer(scope: RequestScope, task: string, limit: number): Promise<SkillOffer[]> {
    if (limit <= 0) return [];
    const hits = await this.service.search(scope, task, limit);
    return hits.map((h) => ({
      name: h.skill.name,
      description: h.version.description,
      version: h.version.seq,
      versionId: h.version.id,
      score: h.score,
      pinned: h.skill.pinned,
      body: h.version.body,
    }));
  }
}
