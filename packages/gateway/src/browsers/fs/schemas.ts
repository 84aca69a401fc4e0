import { z } from "zod";
import { FileInfoQuery, FileInfoRecord } from "../file-info.ts";

/** file_info's rule for every path of the files API: absolute; the NUL rule is parseInput's. */
const absolutePath = z
  .string({ error: (issue) => (issue.input === undefined ? "required" : "must be a string") })
  .startsWith("/", { error: "must be an absolute path (start with /)" });

/** What the official client sends: an octal string such as 644 or 0755. */
const octalMode = z
  .string({ error: "must be a string of octal digits" })
  .regex(/^[0-7]{3,4}$/, { error: "must be 3 or 4 octal digits such as 644 or 0755" });

const bodyObject = {
  error: (issue: { input: unknown }) => (issue.input === undefined ? "required" : "must be a JSON object"),
};

export const PathQuery = FileInfoQuery;
export type PathQuery = z.infer<typeof PathQuery>;

export const WriteFileQuery = FileInfoQuery.extend({
  mode: octalMode.optional().describe("The file's permission bits; default 644"),
});
export type WriteFileQuery = z.infer<typeof WriteFileQuery>;

export const PathBody = z.strictObject({ path: absolutePath }, bodyObject);
export type PathBody = z.infer<typeof PathBody>;

export const CreateDirectoryBody = z.strictObject(
  { path: absolutePath, mode: octalMode.optional().describe("The directory's permission bits; default 755") },
  bodyObject,
);
export type CreateDirectoryBody = z.infer<typeof CreateDirectoryBody>;

export const MoveBody = z.strictObject({ src_path: absolutePath, dest_path: absolutePath }, bodyObject);
export type MoveBody = z.infer<typeof MoveBody>;

export const FileList = FileInfoRecord.array();

/** A body of raw bytes, for the OpenAPI document. */
export const Bytes = z.string().meta({ format: "binary" });
