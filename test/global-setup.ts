import type { TestProject } from "vitest/node";
import { startPostgres } from "./support/postgres.ts";

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

/** One throwaway PostgreSQL server for the whole run; each test file makes its own database in it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await startPostgres();
  project.provide("postgresUrl", postgres.url);
  return () => postgres.stop();
}
