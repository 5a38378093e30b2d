// Texts for the semantic channel's tests on either store: Alice's pottery talk goes with clay and
// glaze; Bob's with kilns and vases. Filler turns give the frequencies something to be measured
// against.
export const FILLER = [
  "the weather was grey and windy all day",
  "my brother called about the football match",
  "we watched a long movie about space travel",
  "the train was late again this morning",
  "I bought new running shoes at the mall",
  "our neighbour is repainting the fence",
];
export const ALICE = [
  "I signed up for a pottery course downtown",
  "we shaped wet clay and painted a glaze on every bowl",
  "the clay bowls need a second glaze coat",
  ...FILLER,
  "pottery again tonight, more clay on my jeans",
  "the glaze came out a deep blue",
];
export const BOB = [
  "my pottery teacher fired the kiln overnight",
  "the kiln cracked two vases",
  ...FILLER,
  "pottery vases from the kiln look great",
  "I gave one of the vases to my aunt",
];
