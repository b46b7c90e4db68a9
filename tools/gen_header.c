/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen_header: writes a flat public header (the build tree's include/shmem.h, pshmem.h, shmemx.h)
 * from its table form (include/table/<name>), the form that is edited: there the typed API is
 * X-macros over the one type table (include/shmem_table.h); in the flat header every prototype,
 * every C11 _Generic list and every C++ overload is written out, so that grep, ctags, an IDE
 * and a reader find each name where it is declared. The expansion is the C preprocessor's own
 * ($(CPP)), so the flat header cannot mean something else than the table form;
 * tests/unit/flat_header.sh checks it does not (same tokens, same macro expansions).
 *
 *   gen_header CPP FLAT.h TABLE_FORM [CONTEXT...]
 *
 * CPP is the preprocessor's command ($(CPP)); it is given the table machinery and the items to
 * expand (FLAT.h.in.c), and its output (FLAT.h.in.i) is merged with the table form's other
 * lines into FLAT.h.
 *
 * A table form is copied line by line, except in regions opened by a line holding only the
 * comment "flat-header: omit" or "flat-header: expand" and closed by one holding only the
 * comment "flat-header: end":
 *   omit    the table machinery: #define and #include lines (and comments), given to the
 *           preprocessor, left out of the flat header;
 *   expand  each declaration or macro call is replaced by its expansion, one declaration per
 *           line (wrapped at 100 columns); a #define keeps its name and parameters and has its
 *           body expanded (a _Generic list one association per line); comments, blank lines
 *           and other directives are copied.
 * The CONTEXT files lend their omit regions' machinery (pshmem.h and shmemx.h use shmem.h's).
 * Macros defined outside omit regions (FSH_API, FSH_COMPLEXD, ...) are the flat header's own
 * and stay unexpanded. A region left open, one opened in another, or a line an omit region
 * cannot hold is an error, with the file and line.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 100
#define MARK_OMIT "/* flat-header: omit */"
#define MARK_EXPAND "/* flat-header: expand */"
#define MARK_END "/* flat-header: end */"
#define ITEM_MARK "fsh_flat_item_"

enum kind { K_COPY, K_MACHINE, K_EXPAND, K_DEFINE };

struct item {
    enum kind kind;
    char *text; /* the line (COPY), the directive (MACHINE), the code or the #define's body */
    char *head; /* K_DEFINE: "#define NAME(params)" */
};

struct items {
    struct item *v;
    size_t n, cap;
};

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "gen_header: out of memory\n");
        exit(1);
    }
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fprintf(stderr, "gen_header: out of memory\n");
        exit(1);
    }
    return p;
}

/* A growing string: s (n bytes) then sep appended. */
struct buf {
    char *s;
    size_t len, cap;
};

static void append(struct buf *b, const char *s, size_t n, char sep)
{
    if (b->len + n + 2 > b->cap) {
        b->cap = 2 * (b->len + n + 2);
        b->s = xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len++] = sep;
    b->s[b->len] = '\0';
}

static void add(struct items *it, enum kind kind, char *text, char *head)
{
    if (it->n == it->cap) {
        it->cap = it->cap ? 2 * it->cap : 256;
        it->v = xrealloc(it->v, it->cap * sizeof(*it->v));
    }
    it->v[it->n++] = (struct item){kind, text, head};
}

/* The lines of a file, without their newlines. */
static char **read_lines(const char *path, size_t *count)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    size_t n = 0, cap = 1024;
    char **lines = xmalloc(cap * sizeof(*lines));
    char *buf = NULL;
    size_t bufcap = 0;
    ssize_t len;
    while ((len = getline(&buf, &bufcap, f)) >= 0) {
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) {
            len--;
        }
        if (n == cap) {
            cap *= 2;
            lines = xrealloc(lines, cap * sizeof(*lines));
        }
        lines[n++] = xstrndup(buf, (size_t)len);
    }
    free(buf);
    fclose(f);
    *count = n;
    return lines;
}

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    return s;
}

static int is_ident(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int is_mark(const char *line, const char *mark)
{
    const char *s = skip_space(line);
    size_t n = strlen(mark);
    return strncmp(s, mark, n) == 0 && *skip_space(s + n) == '\0';
}

static int ends_with_backslash(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) {
        n--;
    }
    return n > 0 && s[n - 1] == '\\';
}

/* Lines i.. joined while they end in a backslash: with the newlines kept (raw) for the
 * preprocessor, or as one line without the backslashes. Advances *i past them. */
static char *join_continued(char **lines, size_t n, size_t *i, int raw)
{
    struct buf b = {0};
    for (;;) {
        const char *l = lines[*i];
        size_t ll = strlen(l);
        int more = ends_with_backslash(l) && *i + 1 < n;
        if (!raw && ends_with_backslash(l)) {
            ll = (size_t)(strrchr(l, '\\') - l);
        }
        append(&b, l, ll, raw ? '\n' : ' ');
        (*i)++;
        if (!more) {
            break;
        }
    }
    b.s[b.len - 1] = '\0';
    return b.s;
}

/* #include "X" of a file in DIR, as #include "DIR/X" with DIR absolute: the preprocessor
 * reads the input from another directory. Other directives are returned as they are. */
static char *rebase_include(char *directive, const char *dir)
{
    const char *s = skip_space(directive + 1);
    if (strncmp(s, "include", 7) != 0) {
        return directive;
    }
    const char *q = strchr(s, '"');
    if (!q) {
        return directive;
    }
    const char *e = strchr(q + 1, '"');
    if (!e) {
        return directive;
    }
    size_t n = strlen(dir) + (size_t)(e - q) + 16;
    char *out = xmalloc(n);
    snprintf(out, n, "#include \"%s/%.*s\"", dir, (int)(e - q - 1), q + 1);
    return out;
}

static char *dir_of(const char *path)
{
    char abs[PATH_MAX];
    if (!realpath(path, abs)) {
        perror(path);
        exit(1);
    }
    char *slash = strrchr(abs, '/');
    return xstrndup(abs, slash ? (size_t)(slash - abs) : 0);
}

/* The items of a table form (see the top of the file). */
static void parse(const char *path, struct items *it)
{
    enum { OUT, OMIT, EXPAND } state = OUT;
    size_t n, i = 0, opened = 0;
    char **lines = read_lines(path, &n);
    char *dir = dir_of(path);
    while (i < n) {
        char *l = lines[i];
        const char *s = skip_space(l);
        if (is_mark(l, MARK_OMIT) || is_mark(l, MARK_EXPAND)) {
            if (state != OUT) {
                fprintf(stderr, "%s:%zu: a region opened inside the region of line %zu\n", path,
                        i + 1, opened);
                exit(1);
            }
            state = is_mark(l, MARK_OMIT) ? OMIT : EXPAND;
            opened = ++i;
            continue;
        }
        if (is_mark(l, MARK_END)) {
            if (state == OUT) {
                fprintf(stderr, "%s:%zu: %s closes no region\n", path, i + 1, MARK_END);
                exit(1);
            }
            state = OUT;
            i++;
            continue;
        }
        if (state == OUT || *s == '\0') {
            if (state != OMIT) {
                add(it, K_COPY, l, NULL);
            }
            i++;
        } else if (strncmp(s, "/*", 2) == 0) {
            /* A comment: copied in an expand region, dropped in an omit region. */
            for (;;) {
                if (state == EXPAND) {
                    add(it, K_COPY, lines[i], NULL);
                }
                if (strstr(lines[i++], "*/") || i == n) {
                    break;
                }
            }
        } else if (*s == '#' && state == OMIT) {
            add(it, K_MACHINE, rebase_include(join_continued(lines, n, &i, 1), dir), NULL);
        } else if (state == OMIT) {
            fprintf(stderr, "%s:%zu: an omit region holds only directives and comments\n", path,
                    i + 1);
            exit(1);
        } else if (*s == '#' && strncmp(skip_space(s + 1), "define", 6) == 0) {
            char *d = join_continued(lines, n, &i, 0);
            const char *h = strchr(d, '#');
            const char *p = skip_space(skip_space(h + 1) + 6);
            while (is_ident(*p)) {
                p++;
            }
            if (*p == '(') {
                p = strchr(p, ')') + 1;
            }
            add(it, K_DEFINE, (char *)skip_space(p), xstrndup(h, (size_t)(p - h)));
        } else if (*s == '#') {
            add(it, K_COPY, l, NULL);
            i++;
        } else {
            /* Code: lines joined until the parentheses balance. */
            struct buf code = {0};
            int depth = 0;
            do {
                const char *c = lines[i];
                append(&code, c, strlen(c), ' ');
                for (; *c; c++) {
                    depth += (*c == '(') - (*c == ')');
                }
                i++;
            } while (depth > 0 && i < n);
            add(it, K_EXPAND, code.s, NULL);
        }
    }
    if (state != OUT) {
        fprintf(stderr, "%s:%zu: region not closed (%s)\n", path, opened, MARK_END);
        exit(1);
    }
}

static int split(const char *out, int nfiles, char **files)
{
    FILE *f = fopen(out, "w");
    if (!f) {
        perror(out);
        return 1;
    }
    /* The machinery of the context files, then of the table form, then its items. */
    for (int k = 1; k <= nfiles; k++) {
        struct items it = {0};
        parse(files[k % nfiles], &it);
        for (size_t i = 0; i < it.n; i++) {
            if (it.v[i].kind == K_MACHINE) {
                fprintf(f, "%s\n", it.v[i].text);
            }
        }
    }
    struct items it = {0};
    parse(files[0], &it);
    for (size_t i = 0, item = 0; i < it.n; i++) {
        if (it.v[i].kind == K_EXPAND || it.v[i].kind == K_DEFINE) {
            fprintf(f, "%s%zu\n%s\n", ITEM_MARK, item++, it.v[i].text);
        }
    }
    return fclose(f) != 0;
}

/* ------------------------------------------------------------------ formatting */

/* out[0..n) ends in a name that a parenthesis may follow directly: a function's, not return. */
static int ident_before(const char *out, size_t n)
{
    size_t b = n;
    while (b > 0 && is_ident(out[b - 1])) {
        b--;
    }
    return b < n && !(n - b == 6 && strncmp(out + b, "return", 6) == 0);
}

/* Whitespace runs as one space (none between a function's name and its parenthesis), none after ( and [ or before ) ] , ; (literals kept). */
static char *normalize(const char *s)
{
    char *out = xmalloc(strlen(s) + 1);
    size_t n = 0;
    while (*s) {
        if (*s == '"' || *s == '\'') {
            char q = *s;
            out[n++] = *s++;
            while (*s && *s != q) {
                if (*s == '\\' && s[1]) {
                    out[n++] = *s++;
                }
                out[n++] = *s++;
            }
            if (*s) {
                out[n++] = *s++;
            }
        } else if (*s == ' ' || *s == '\t' || *s == '\n') {
            s = skip_space(s);
            while (*s == '\n') {
                s = skip_space(s + 1);
            }
            if (n > 0 && out[n - 1] != '(' && out[n - 1] != '[' && *s && !strchr(")],;", *s) &&
                !(*s == '(' && ident_before(out, n))) {
                out[n++] = ' ';
            }
        } else {
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
    return out;
}

static void put_padded(const char *line, size_t len, int backslash)
{
    fwrite(line, 1, len, stdout);
    if (backslash) {
        for (size_t c = len; c < WIDTH - 1; c++) {
            putchar(' ');
        }
        fputs(len >= WIDTH - 1 ? " \\" : "\\", stdout);
    }
    putchar('\n');
}

/* s (len bytes) on lines of at most WIDTH columns where it can be: broken after a comma or
 * before && and ||, continuation lines aligned after the first parenthesis (or indented 4
 * more than the first line when that is far right or there is none). */
static void put_wrapped(const char *s, size_t len, int indent)
{
    /* A disjunction (the C++ traits) has one term per line. */
    const char *or = (int)len > WIDTH - indent ? strstr(s, " || ") : NULL;
    if (or && or < s + len) {
        printf("%*s", indent, "");
        fwrite(s, 1, (size_t)(or - s), stdout);
        putchar('\n');
        while (or && or < s + len) {
            const char *next = strstr(or + 4, " || ");
            const char *end = next && next < s + len ? next : s + len;
            printf("%*s", indent + 4, "");
            fwrite(or + 1, 1, (size_t)(end - or - 1), stdout);
            putchar('\n');
            or = next;
        }
        return;
    }
    int align = indent + 4, depth = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '(' && depth++ == 0 && indent + (int)i + 1 <= 60) {
            align = indent + (int)i + 1;
            break;
        }
    }
    int col = indent;
    size_t start = 0;
    while (start < len) {
        size_t brk = 0, i;
        for (i = start; i < len; i++) {
            if (col + (int)(i - start) >= WIDTH && brk) {
                break;
            }
            if (s[i] == ' ' && (s[i - 1] == ',' || (i + 2 < len && (!strncmp(s + i + 1, "&&", 2) ||
                                                                    !strncmp(s + i + 1, "||", 2))))) {
                brk = i;
            }
        }
        if (i == len) {
            brk = len;
        }
        printf("%*s", col, "");
        fwrite(s + start, 1, brk - start, stdout);
        putchar('\n');
        start = brk < len ? brk + 1 : len;
        col = align;
    }
}

/* The end of a `template <...>` head that starts s, or 0. */
static size_t template_end(const char *s, size_t len)
{
    if (strncmp(s, "template <", 10) != 0) {
        return 0;
    }
    int depth = 0;
    for (size_t i = 9; i < len; i++) {
        if (s[i] == '<') {
            depth++;
        } else if (s[i] == '>' && s[i - 1] != '-' && --depth == 0) {
            return i + 1;
        }
    }
    return 0;
}

/* One declaration or definition: a C++ template head on a line of its own, a function body
 * on the line after its head. */
static void put_statement(const char *s, size_t len)
{
    size_t t = template_end(s, len);
    if (t) {
        put_wrapped(s, t, 0);
        s += t + 1;
        len -= t + 1;
    }
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        depth += (s[i] == '(') - (s[i] == ')');
        if (s[i] == '{' && depth == 0 && s[i + 1] != '}') {
            put_wrapped(s, i - 1, 0);
            put_wrapped(s + i, len - i, 0);
            return;
        }
    }
    put_wrapped(s, len, 0);
}

/* An expanded item: one statement (ending in ; or in the } of a body) at a time. */
static void put_code(const char *text)
{
    char *s = normalize(text);
    size_t start = 0, len = strlen(s);
    int depth = 0, braces = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        depth += (c == '(' || c == '[') - (c == ')' || c == ']');
        braces += (c == '{') - (c == '}');
        if (depth == 0 && braces == 0 && (c == ';' || c == '}')) {
            if (c == '}' && s[i + 1] == ';') {
                i++;
            }
            put_statement(s + start, i + 1 - start);
            start = i + 1;
            while (s[start] == ' ') {
                start++;
            }
        }
    }
    if (start < len) {
        put_statement(s + start, len - start);
    }
    free(s);
}

/* #define HEAD BODY: a _Generic list one association per line, nested lists indented. */
static void put_define(const char *head, const char *body)
{
    char *s = normalize(body);
    size_t len = strlen(s);
    if (!strstr(s, "_Generic(")) {
        if (strlen(head) + 1 + len <= WIDTH) {
            printf("%s %s\n", head, s);
        } else {
            put_padded(head, strlen(head), 1);
            printf("    %s\n", s);
        }
        free(s);
        return;
    }
    put_padded(head, strlen(head), 1);
    char line[4096];
    int stack[64], sp = 0, level = 0;
    size_t n = (size_t)snprintf(line, sizeof(line), "    ");
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '(') {
            int gen = i >= 8 && !strncmp(s + i - 8, "_Generic", 8);
            stack[sp++] = gen;
            level += gen;
        } else if (s[i] == ')' && sp > 0) {
            level -= stack[--sp];
        }
        if (n + 2 < sizeof(line)) {
            line[n++] = s[i];
        }
        if (s[i] == ',' && sp > 0 && stack[sp - 1]) {
            put_padded(line, n, 1);
            n = (size_t)snprintf(line, sizeof(line), "%*s", 4 + 4 * level, "");
            if (s[i + 1] == ' ') {
                i++;
            }
        }
    }
    put_padded(line, n, 0);
    free(s);
}

static char **expansions(const char *path, size_t *count)
{
    size_t n;
    char **lines = read_lines(path, &n);
    struct buf *out = xmalloc((n + 1) * sizeof(*out));
    size_t items = 0, mark = strlen(ITEM_MARK);
    for (size_t i = 0; i < n; i++) {
        if (strncmp(lines[i], ITEM_MARK, mark) == 0 && strtoul(lines[i] + mark, NULL, 10) == items) {
            out[items++] = (struct buf){0};
            append(&out[items - 1], "", 0, ' ');
        } else if (items > 0 && *skip_space(lines[i])) {
            append(&out[items - 1], lines[i], strlen(lines[i]), ' ');
        }
    }
    char **texts = xmalloc((items + 1) * sizeof(*texts));
    for (size_t k = 0; k < items; k++) {
        texts[k] = out[k].s;
    }
    *count = items;
    return texts;
}

static int merge(const char *table_form, const char *expanded)
{
    struct items it = {0};
    size_t nexp, item = 0;
    int blank = 0;
    parse(table_form, &it);
    char **exp = expansions(expanded, &nexp);
    const char *base = strrchr(table_form, '/') ? strrchr(table_form, '/') + 1 : table_form;
    for (size_t i = 0; i < it.n; i++) {
        struct item *x = &it.v[i];
        if ((x->kind == K_EXPAND || x->kind == K_DEFINE) && item >= nexp) {
            fprintf(stderr, "gen_header: %s has %zu expansions, %s more items\n", expanded, nexp,
                    table_form);
            return 1;
        }
        switch (x->kind) {
        case K_COPY:
            /* A region left out leaves no second blank line. */
            if (*skip_space(x->text) == '\0' && blank) {
                break;
            }
            blank = *skip_space(x->text) == '\0';
            puts(x->text);
            if (i == 0) {
                printf("/* Written by tools/gen_header from include/table/%s and the type table,\n"
                       " * include/shmem_table.h: edit those, not this file. */\n",
                       base);
            }
            break;
        case K_MACHINE:
            break;
        case K_EXPAND:
            put_code(exp[item++]);
            blank = 0;
            break;
        case K_DEFINE:
            put_define(x->head, exp[item++]);
            blank = 0;
            break;
        }
    }
    if (item != nexp) {
        fprintf(stderr, "gen_header: %s has %zu expansions, %s %zu items\n", expanded, nexp,
                table_form, item);
        return 1;
    }
    return fflush(stdout) != 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: gen_header CPP FLAT.h TABLE_FORM [CONTEXT...]\n");
        return 2;
    }
    const char *cpp = argv[1], *out = argv[2];
    size_t n = strlen(out) + 16;
    char *in_c = xmalloc(n), *in_i = xmalloc(n), *tmp = xmalloc(n);
    snprintf(in_c, n, "%s.in.c", out);
    snprintf(in_i, n, "%s.in.i", out);
    snprintf(tmp, n, "%s.tmp", out);
    size_t cn = strlen(cpp) + 2 * n + 16;
    char *cmd = xmalloc(cn);
    snprintf(cmd, cn, "%s -P '%s' > '%s'", cpp, in_c, in_i);
    int rc = split(in_c, argc - 3, argv + 3);
    if (rc == 0 && system(cmd) != 0) {
        fprintf(stderr, "gen_header: %s failed\n", cmd);
        rc = 1;
    }
    if (rc == 0 && !freopen(tmp, "w", stdout)) {
        perror(tmp);
        rc = 1;
    }
    if (rc == 0) {
        rc = merge(argv[3], in_i);
        rc |= fclose(stdout) != 0;
    }
    if (rc == 0 && rename(tmp, out) != 0) {
        perror(out);
        rc = 1;
    }
    remove(in_c);
    remove(in_i);
    remove(tmp);
    return rc;
}
