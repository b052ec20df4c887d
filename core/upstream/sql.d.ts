// Migration SQL is imported as text so the single binary carries it.
declare module "*.sql" {
  const text: string;
  export default text;
}
