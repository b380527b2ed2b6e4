// Types of Relata's JavaScript client (relata.js). Documentation/JavaScript.md shows it in use.

/** A value as a row holds it: numbers for integers, floats and decimals, `Date`, GUID strings, `Uint8Array`. */
export type FieldValue = number | string | boolean | Date | Uint8Array | null;

/** A value as the protocol tags it: `{integer: 7}`, `{decimal: "19.99"}`, `{date: "2026-11-23T10:00:00Z"}`. */
export type TaggedValue = { integer: number } | { double: number } | { decimal: string } | { boolean: boolean }
    | { string: string } | { date: string } | { guid: string } | { blob: string } | null;

export type RowState = 'unchanged' | 'modified' | 'added' | 'addedInEditMode' | 'deleted';

export interface FieldDefinition {
    name: string;
    type: string;
    primaryKey?: boolean;
    required?: boolean;
    size?: number;
    readOnly?: boolean;
    defaultValue?: unknown;
    logChanges?: boolean;
}

export interface RowEdit {
    sequence: number;
    kind: 'insert' | 'update' | 'delete';
    values: Record<string, FieldValue>;
}

/** Why the server (or the page's rules) refused a change: kind, message, event, table, row and script location. */
export interface ChangeFailure {
    kind?: 'refusal' | 'ruleError' | 'invalidValue' | 'constraint' | 'conflict' | 'storeError';
    message: string;
    event?: string;
    table?: string;
    row?: string;
    file?: string;
    line?: number;
    column?: number;
}

export interface DeltaChange {
    changeId: number;
    type: 'insert' | 'update' | 'delete';
    status: 'pending' | 'resolved' | 'failed';
    oldValues: Record<string, TaggedValue>;
    newValues: Record<string, TaggedValue>;
    refreshedValues: Record<string, TaggedValue>;
    edits?: { sequence: number; kind: 'insert' | 'update' | 'delete'; values: Record<string, TaggedValue> }[];
    message?: string;
    failure?: ChangeFailure;
}

export interface Delta {
    tableName: string;
    keyFields: string[];
    loggedFields: string[];
    changes: DeltaChange[];
}

export class RelataError extends Error {
    constructor(code: string, message: string, details?: Partial<RelataError>);
    /** The protocol's code: `loginFailed`, `refused`, `ruleError`, `typeMismatch`, `staleRules`, … */
    code: string;
    status?: number;
    table?: string;
    field?: string;
    row?: string;
    event?: string;
    file?: string;
    line?: number;
    column?: number;
    location?: string;
    retryAfter?: number;
}

export class DataRow {
    readonly table: DataTable;
    readonly state: RowState;
    readonly edits: RowEdit[];
    readonly failure: ChangeFailure | null;
    readonly isEditing: boolean;
    readonly locked: boolean;
    readonly label: string;
    get(field: string): FieldValue;
    original(field: string): FieldValue;
    set(field: string, value: unknown): void;
    setValues(values: Record<string, unknown>): void;
    edit(): void;
    post(): void;
    discard(): void;
    remove(): void;
    revert(): void;
}

export class DataTable {
    constructor(name: string, fields: FieldDefinition[], definition?: { lookupFields?: object[]; calculatedFields?: object[]; readOnly?: boolean });
    readonly name: string;
    readonly fields: FieldDefinition[];
    readonly rows: DataRow[];
    readOnly: boolean;
    readonly pendingRows: DataRow[];
    readonly hasChanges: boolean;
    /** Whether the table holds every row of its data source's table (fetched without where or maxRecords). */
    complete?: boolean;
    rules: RuleSet | null;
    observers: Set<(table: DataTable, row: DataRow | null, what: string) => void>;
    load(rows: FieldValue[][]): void;
    addRow(values?: Record<string, unknown>, options?: { inEditMode?: boolean }): DataRow;
    makeDelta(): Delta | null;
    accept(delta: Delta, others?: DataTable[]): void;
}

export interface Session {
    values: Record<string, unknown>;
    roles: string[];
}

export interface SchemaAnswer {
    schema: { name: string; tables: { name: string; fields: FieldDefinition[] }[]; updateOrder?: string[] } & Record<string, unknown>;
    version: string;
    allowed?: Record<string, string[]>;
    rolesAllowed?: Record<string, Record<string, string[]>>;
}

export interface DataRequest {
    table: string;
    fields?: string[] | null;
    where?: string | null;
    parameters?: Record<string, TaggedValue>;
    maxRecords?: number | null;
    sql?: string;
}

export class RuleSet {
    constructor(schema: SchemaAnswer['schema'], environment?: { session?: Session; tables?: () => Map<string, DataTable>; log?: (line: string, location: object) => void });
    run(event: string, table: DataTable, row: DataRow, old?: Record<string, FieldValue>): void;
}

export const rowEvents: readonly string[];

export class RowStreamDecoder {
    push(chunk: Uint8Array): object[];
    finish(): void;
}

/** `AdminService/Overview`'s answer. */
export interface ServerOverview {
    server: { protocol: string; started: string; uptimeSeconds: number };
    domain: string;
    health: { status: 'ready' | 'notReady'; checks: { name: string; ready: boolean; problem?: string; rulesVersion?: string }[] };
    sessions: { user: string; domain: string; roles: string[]; started: string; expires: string; ends: string }[];
    refusals: { at: string; user?: string; domain?: string; service?: string; requestId?: string; kind: string; message: string;
        table?: string; row?: string; event?: string; file?: string; line?: number; column?: number }[];
}

export class RelataClient {
    constructor(options?: { baseURL?: string; schema?: string; fetch?: typeof fetch; retries?: number; retryDelay?: number; log?: (line: string, location: object) => void });
    token: string | null;
    session: Session | null;
    /** Whether the session may call `AdminService` (one of the server's `console.adminRoles`). */
    isAdmin: boolean;
    schemaAnswer: SchemaAnswer | null;
    tables: Map<string, DataTable>;
    unansweredApply: object | null;
    onRulesChanged: ((version: string) => void) | null;
    /** Whether an apply is validated in the page first; changes that would fail are not sent (true). */
    validatesChangesLocally: boolean;
    /** What an apply would make of each change, found in the page: delta events, foreign keys, update rules, beforeCommit, permissions. */
    validate(tables?: DataTable[]): Delta[];
    /** The tables the held tables' rules read through `lda` and their lookups show (fetched with them). */
    tablesTheRulesRead(): string[];
    login(credentials: string | { user: string; password: string; domain?: string; schema?: string }): Promise<Session>;
    logout(): Promise<void>;
    /** For an admin session: the server's health, the domain's sessions (never their tokens), its recent refusals. */
    serverOverview(): Promise<ServerOverview>;
    getSchema(): Promise<SchemaAnswer>;
    fetchTables(requests: DataRequest[], options?: { binary?: boolean; withRuleTables?: boolean }): Promise<DataTable[]>;
    fetchTable(name: string, options?: Omit<DataRequest, 'table'>): Promise<DataTable>;
    query(sql: string, options?: { parameters?: Record<string, TaggedValue>; maxRecords?: number; name?: string; binary?: boolean }): Promise<DataTable>;
    executeCommand(command: string, parameters?: Record<string, TaggedValue>): Promise<{ result: unknown; deltas: Delta[] }>;
    applyChanges(tables?: DataTable[]): Promise<{ deltas: Delta[]; failed: { table: string; row: DataRow; failure: ChangeFailure }[] }>;
}

/** A script location as `file:line:column`, as far as it is known (undefined without a file). */
export function scriptLocation(place?: { file?: string; line?: number; column?: number }): string | undefined;
export function checkValue(value: unknown, field: FieldDefinition, table: string): FieldValue;
export function fromTagged(tagged: TaggedValue): FieldValue;
export function toTagged(value: FieldValue, field: FieldDefinition): TaggedValue;
export function storageOf(type: string): 'integer' | 'double' | 'decimal' | 'boolean' | 'string' | 'date' | 'guid' | 'blob';
export function sameValue(a: unknown, b: unknown): boolean;
/** The rows of a table a where expression (Documentation/Expressions.md) keeps. */
export function rowsWhere(table: DataTable, where: string, parameters?: Record<string, FieldValue>): DataRow[];
/** ISO 8601 text as a date, as the server reads it (no offset means UTC); null when it is not one. */
export function parseDate(text: string): Date | null;

/** What became of one edit of an edits file (as `relata run --json` reports it). */
export interface EditVerdict {
    index: number;
    edit: string;
    row?: string;
    verdict: 'applied' | 'validated' | 'pending' | 'undone' | 'refused' | 'failed';
    kind?: ChangeFailure['kind'];
    message?: string;
    location?: string;
    event?: string;
    values?: Record<string, unknown>;
}

/** Edits of an edits file (Documentation/Schema.md) made through the tables' rules, with a verdict each. */
export class EditRun {
    constructor(edits: object[], tables: Map<string, DataTable> | DataTable[]);
    /** What an apply (or a validation, with `passing = 'validated'`) made of the edits' changes. */
    record(deltas: Delta[], passing?: 'applied' | 'validated'): void;
    report(): { verdicts: EditVerdict[]; summary: Record<string, number> };
}

/** `insert Orders`, `update Products (key 7)`. */
export function editSummary(edit: object): string;
