// Reading Open Food Facts (https://openfoodfacts.github.io/openfoodfacts-server/api/).
// A product is GET /api/v2/product/<barcode>: {"status": 1, "product": {...}},
// or HTTP 404 {"status": 0, "status_verbose": "product not found"}.
import { notFound } from "hearth";

export const PRODUCT_FIELDS = [
  "code",
  "product_name",
  "generic_name",
  "brands",
  "quantity",
  "ingredients_text",
  "allergens_tags",
  "traces_tags",
  "nutriments",
  "nutriscore_grade",
  "nova_group",
  "categories",
  "image_front_url",
].join(",");

export const SEARCH_FIELDS = ["code", "product_name", "brands", "quantity", "nutriscore_grade", "nova_group"].join(",");

const text = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v.trim() : null);
const num = (v: unknown): number | null =>
  typeof v === "number" && Number.isFinite(v) ? v : typeof v === "string" && v.trim() && Number.isFinite(Number(v)) ? Number(v) : null;
/** "en:milk" -> "milk"; taxonomy tags keep their language prefix. */
const untag = (t: string) => t.replace(/^[a-z]{2,3}:/, "").replace(/-/g, " ");

// Nutrition per 100 g, in the units Open Food Facts normalises to.
const NUTRIENTS: [string, string][] = [
  ["energy_kcal", "energy-kcal_100g"],
  ["fat_g", "fat_100g"],
  ["saturated_fat_g", "saturated-fat_100g"],
  ["carbohydrates_g", "carbohydrates_100g"],
  ["sugars_g", "sugars_100g"],
  ["fiber_g", "fiber_100g"],
  ["proteins_g", "proteins_100g"],
  ["salt_g", "salt_100g"],
];

const NOVA: Record<number, string> = {
  1: "unprocessed or minimally processed",
  2: "processed culinary ingredient",
  3: "processed",
  4: "ultra-processed",
};

export function product(body: any, status: number) {
  if (status === 404 || body?.status === 0) {
    const code = typeof body?.code === "string" && body.code ? body.code : null;
    throw notFound(code ? `no product with barcode ${code} on Open Food Facts` : "no product with that barcode on Open Food Facts");
  }
  const p = body?.product;
  if (body?.status !== 1 || !p || typeof p !== "object") throw new Error("not an Open Food Facts product answer");
  const silent: string[] = [];

  const ingredients = text(p.ingredients_text);
  if (!ingredients) silent.push("ingredients");

  // An empty allergen list means "none declared" only when the ingredients are known.
  const tags: string[] = Array.isArray(p.allergens_tags) ? p.allergens_tags.filter((t: unknown) => typeof t === "string") : [];
  let allergens: string[] | null = tags.map(untag);
  if (!tags.length && !ingredients) {
    allergens = null;
    silent.push("allergens");
  }
  const traces: string[] = Array.isArray(p.traces_tags) ? p.traces_tags.filter((t: unknown) => typeof t === "string").map(untag) : [];

  const nutrition: Record<string, number | null> = {};
  const n = p.nutriments && typeof p.nutriments === "object" ? p.nutriments : {};
  for (const [name, key] of NUTRIENTS) {
    nutrition[name] = num(n[key]);
    if (nutrition[name] === null) silent.push(`nutrition.${name}`);
  }

  const grade = text(p.nutriscore_grade)?.toLowerCase();
  const nutriScore = grade && /^[a-e]$/.test(grade) ? grade.toUpperCase() : null;
  if (!nutriScore) silent.push("nutri_score");
  const nova = num(p.nova_group);
  const novaGroup = nova !== null && NOVA[nova] ? nova : null;
  if (novaGroup === null) silent.push("nova_group");

  return {
    barcode: String(p.code ?? body.code ?? ""),
    name: text(p.product_name) ?? text(p.generic_name),
    brand: text(p.brands),
    quantity: text(p.quantity),
    categories: text(p.categories),
    ingredients,
    allergens,
    allergens_note:
      allergens === null
        ? "not stated: the product has no ingredient list or allergen declaration on record"
        : allergens.length
          ? null
          : "none declared in the recorded ingredients",
    traces,
    nutrition_per_100g: nutrition,
    nutri_score: nutriScore,
    nova_group: novaGroup,
    processing: novaGroup ? NOVA[novaGroup] : null,
    image: text(p.image_front_url),
    /** Fields Open Food Facts has nothing on: absent data, not zero or none. */
    not_on_record: silent,
  };
}

export function search(body: any) {
  if (!body || !Array.isArray(body.products) || typeof body.count !== "number") throw new Error("not an Open Food Facts search answer");
  return {
    total: body.count as number,
    products: body.products
      .filter((p: any) => typeof p?.code === "string" && p.code)
      .map((p: any) => {
        const grade = text(p.nutriscore_grade)?.toLowerCase();
        const nova = num(p.nova_group);
        return {
          barcode: p.code as string,
          name: text(p.product_name),
          brand: text(p.brands),
          quantity: text(p.quantity),
          nutri_score: grade && /^[a-e]$/.test(grade) ? grade.toUpperCase() : null,
          nova_group: nova !== null && NOVA[nova] ? nova : null,
        };
      }),
  };
}
