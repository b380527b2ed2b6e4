// The one error the client throws: the protocol's error answer, or a check made before sending.

/**
 * An error with the protocol's code (`loginFailed`, `staleRules`, `typeMismatch`, …) and, when
 * known, the HTTP status, table, field, row and script location.
 *
 * @example
 * try { await client.login({ user: 'ann', password: 'wrong' }); }
 * catch (error) { if (error.code === 'loginFailed') showLoginForm(error.message); }
 */
export class RelataError extends Error {
    /**
     * @param {string} code
     * @param {string} message
     * @param {{status?: number, table?: string, field?: string, row?: string, location?: string,
     *          event?: string, file?: string, line?: number, column?: number, retryAfter?: number}} [details]
     */
    constructor(code, message, details = {}) {
        super(message);
        this.name = 'RelataError';
        this.code = code;
        Object.assign(this, details);
    }

    /** The error of a protocol answer `{"error": {...}}` with its status. */
    static fromAnswer(status, answer, retryAfter) {
        const error = answer && typeof answer === 'object' && answer.error && typeof answer.error === 'object' ? answer.error : null;
        if (!error) return new RelataError('invalidResponse', `the server answered ${status} without an error it explains`, { status });
        const { code, message, ...details } = error;
        return new RelataError(String(code ?? 'unknown'), String(message ?? ''), { ...details, status, retryAfter });
    }
}

/**
 * A script location as `file:line:column`, as far as it is known (undefined without a file).
 * @example scriptLocation({ file: 'Orders.js', line: 4, column: 9 })   // 'Orders.js:4:9'
 */
export function scriptLocation({ file, line, column } = {}) {
    return file ? [file, line, column].filter((part) => part !== undefined && part !== null).join(':') : undefined;
}
