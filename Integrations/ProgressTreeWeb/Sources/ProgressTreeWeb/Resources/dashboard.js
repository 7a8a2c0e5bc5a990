// ProgressTree's web dashboard: draws a progress tree served as Server-Sent Events (Docs/WireFormat.md,
// "Over HTTP") and sends Pause / Resume / Cancel back as the wire format's commands. Plain JavaScript, no
// build step, nothing from another host. Every URL is relative, so the page also works when a reverse
// proxy serves it under a path prefix ("/jobs/42/"). Nothing from the stream is ever inserted as HTML:
// names and reasons are set with textContent.
'use strict';

(function () {
    // How many children of one node get a row of their own; the others are counted in a "+N more" row.
    const SHOWN_CHILDREN = 50;
    // How many finished (or cancelled) children of a node stay in sight, most recent first, as the
    // terminal's keptFinishedChildren. Failed children stay: their reasons matter.
    const KEPT_FINISHED = 3;
    const FINAL = new Set(['cancelled', 'failed', 'finished']);
    const STATES = new Set(['running', 'paused', 'cancelled', 'failed', 'finished']);
    const MARKS = { running: '•', paused: '‖', cancelled: '✗', failed: '!', finished: '✓' };
    const FILE_KIND = 'NSProgressKindFile';

    const elements = {
        title: document.getElementById('title'),
        connection: document.getElementById('connection'),
        mode: document.getElementById('mode'),
        summary: document.getElementById('summary'),
        error: document.getElementById('error'),
        tree: document.getElementById('tree'),
        outcomesSection: document.getElementById('outcomes-section'),
        outcomes: document.getElementById('outcomes'),
    };

    // The tree as the stream told it: the last line of each id.
    const nodes = new Map();
    let root = null;
    let endCounter = 0;          // orders the ends of nodes, for the finished children kept in sight
    const failures = [];         // failed nodes, in the order their failure was seen
    let namedSinceOpen = null;   // ids named since the connection opened, until `synced`
    let source = null;
    let finished = false;        // the root's final line was applied: the stream is over
    let unsupportedVersion = null;

    // Commands.
    let token = null;            // the server's token; null while unknown or on a read-only server
    let readOnly = false;

    // Rendering: at most one frame per animation frame, whatever the number of events.
    let framePending = false;
    const rows = new Map();      // row key -> { element, parts, ... }

    // --- Reading the stream -------------------------------------------------------------------------

    function isInteger(value) {
        return typeof value === 'number' && Number.isInteger(value);
    }

    function isNumberOrNull(value) {
        return value === null || value === undefined || (typeof value === 'number' && Number.isFinite(value));
    }

    function isStringOrNull(value) {
        return value === null || value === undefined || typeof value === 'string';
    }

    // A progress line, or null when the line is not one this page can use (the wire format's "Bad input":
    // a reader survives any input and ignores what it cannot read).
    function parseLine(data) {
        let record;
        try {
            record = JSON.parse(data);
        } catch (error) {
            return null;
        }
        if (record === null || typeof record !== 'object' || Array.isArray(record)) return null;
        if (record.v === undefined) return null;
        if (record.v !== 1) {
            if (isInteger(record.v) && unsupportedVersion === null) {
                unsupportedVersion = record.v;
                showError('unsupported progress wire format version ' + record.v + ' (this page reads version 1)');
            }
            return null;
        }
        if (!isInteger(record.id) || record.id < 1) return null;
        if (!(record.parent === null || (isInteger(record.parent) && record.parent >= 1))) return null;
        if (record.parent === record.id) return null;
        if (typeof record.state !== 'string' || !STATES.has(record.state)) return null;
        if (!isInteger(record.completed) || !isInteger(record.total)) return null;
        if (record.fraction !== undefined && record.fraction !== null) {
            if (typeof record.fraction !== 'number' || !(record.fraction >= 0 && record.fraction <= 1)) return null;
        }
        for (const key of ['throughput', 'timeRemaining', 'failedBelow', 'cancelledBelow', 'fileTotalCount',
            'fileCompletedCount', 'pending']) {
            if (!isNumberOrNull(record[key])) return null;
        }
        for (const key of ['name', 'reason', 'description', 'additionalDescription', 'kind', 'fileOperationKind',
            'fileURL']) {
            if (!isStringOrNull(record[key])) return null;
        }
        return record;
    }

    function apply(record) {
        if (finished) return;
        if (namedSinceOpen) namedSinceOpen.add(record.id);
        let node = nodes.get(record.id);
        if (node) {
            if (node.ended) return;                       // a later line of a node that ended: it ended with it
            if (node.parentId !== record.parent) return;  // a node never changes parent
        } else {
            let parent = null;
            if (record.parent === null) {
                if (root !== null) return;                // a second root
            } else {
                parent = nodes.get(record.parent);
                if (!parent || parent.ended) return;      // unknown parent, or named below a node that ended
            }
            node = {
                id: record.id, parentId: record.parent, parent: parent, children: [],
                depth: parent ? parent.depth + 1 : 0, line: null, version: 0, ended: false, endOrder: 0,
            };
            nodes.set(node.id, node);
            if (parent) parent.children.push(node); else root = node;
        }
        node.line = record;
        node.version += 1;
        sample(node, record);
        if (FINAL.has(record.state)) end(node, record.state);
        if (node === root && node.ended) streamEnded();
        scheduleFrame();
    }

    // Estimates for lines that carry none (a publisher writes the throughput and time remaining its program
    // set, not estimates): from the lines received over the last 5 s, how fast a running node with a total
    // moves. Shown, as the terminal shows its estimates, for the root (time remaining) and for nodes that
    // count bytes (throughput too); a node paused, ended or without a total has none.
    const ESTIMATE_WINDOW = 5000;
    function sample(node, line) {
        if (line.state !== 'running' || line.indeterminate === true || !(line.total > 0)
            || typeof line.fraction !== 'number') {
            node.samples = null;
            node.estimate = null;
            return;
        }
        const now = performance.now();
        const samples = node.samples || (node.samples = []);
        samples.push({ time: now, fraction: line.fraction, completed: line.completed });
        while (samples.length > 2 && now - samples[1].time >= ESTIMATE_WINDOW) samples.shift();
        const first = samples[0];
        const seconds = (now - first.time) / 1000;
        node.estimate = null;
        if (seconds < 1) return;
        const estimate = {};
        const fractionRate = (line.fraction - first.fraction) / seconds;
        if (fractionRate > 0) estimate.timeRemaining = (1 - line.fraction) / fractionRate;
        if (isBytes(line) && line.completed > first.completed) {
            estimate.throughput = (line.completed - first.completed) / seconds;
        }
        node.estimate = estimate;
    }

    // A node's final line ends its subtree: a node below it still running ends with its outcome (finished
    // below a finished node, cancelled below a cancelled or failed one), as the writer's last lines say.
    function end(node, state) {
        if (node.ended) return;
        node.ended = true;
        node.endOrder = ++endCounter;
        if (node.line.state === 'failed') {
            failures.push(node);
            announceFailure(node);
        }
        const outcome = state === 'finished' ? 'finished' : 'cancelled';
        for (const child of node.children) {
            if (!child.ended) {
                child.line = finishedLine(child.line, outcome);
                child.version += 1;
                end(child, outcome);
            }
        }
    }

    // The line of a node ended by what the page learned of another node's end.
    function finishedLine(line, state) {
        const changes = { state: state, throughput: null, timeRemaining: null };
        if (state === 'finished') {
            changes.fraction = 1;
            if (line.total >= 0) changes.completed = line.total;
        }
        return Object.assign({}, line, changes);
    }

    // After a reconnection, a node the page knew that the server did not name before `synced` finished
    // while the page was away, and left the tree.
    function synced() {
        if (namedSinceOpen === null) return;
        const named = namedSinceOpen;
        namedSinceOpen = null;
        for (const node of nodes.values()) {
            // The root is always named; one that is not (a server that restarted) is left as it was.
            if (node.ended || node === root || named.has(node.id)) continue;
            node.line = finishedLine(node.line, 'finished');
            node.version += 1;
            end(node, 'finished');
        }
        setConnection(finished ? connectionEndText() : 'live');
        scheduleFrame();
    }

    // The page reconnects itself, with a new EventSource, rather than letting the browser reconnect with
    // Last-Event-ID: a server may then leave out the nodes that did not change, and the page could not tell
    // them from the nodes that finished while it was away. A new connection gets every node still in the
    // tree before `synced`, so a node it does not name has ended.
    let retryDelay = 1000;
    let reconnectTimer = null;

    function connect() {
        reconnectTimer = null;
        const current = new EventSource('events');
        source = current;
        current.onopen = function () {
            namedSinceOpen = new Set();
            setConnection('syncing…');
        };
        current.onmessage = function (event) {
            if (current !== source) return;
            const record = parseLine(event.data);
            if (record) apply(record);
        };
        current.addEventListener('synced', function () {
            if (current !== source) return;
            retryDelay = 1000;
            synced();
        });
        current.onerror = function () {
            current.close();
            if (finished || current !== source || reconnectTimer !== null) return;
            namedSinceOpen = null;
            setConnection('reconnecting…');
            reconnectTimer = window.setTimeout(connect, retryDelay);
            retryDelay = Math.min(retryDelay * 2, 10000);
        };
    }

    // The root's final line is the end of the stream: the page keeps the final state and stops reading.
    function streamEnded() {
        finished = true;
        if (source) source.close();
        setConnection(connectionEndText());
        elements.summary.textContent = summaryText();
        const failedBelow = isInteger(root.line.failedBelow) ? root.line.failedBelow : 0;
        elements.summary.dataset.outcome = root.line.state === 'finished' && failedBelow > 0 ? 'failures' : root.line.state;
        elements.summary.hidden = false;
    }

    function connectionEndText() {
        if (!root) return 'finished';
        const line = root.line;
        if (line.state === 'failed') return 'failed: ' + reasonText(root);
        if (line.state === 'cancelled') return 'cancelled';
        return 'finished';
    }

    // --- Words ---------------------------------------------------------------------------------------

    // Control characters are shown as spaces, as the terminal does.
    function clean(text) {
        return String(text).replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
    }

    function labelOf(node) {
        const line = node.line;
        let label = clean(line.name || '').trim();
        if (!label && line.fileURL) label = lastComponent(line.fileURL);
        if (!label && line.description) label = clean(line.description).trim();
        // A line whose work ended drops the trailing ellipsis that says the work goes on.
        if (FINAL.has(line.state)) label = label.replace(/(…|\.\.\.)$/, '');
        return label;
    }

    function lastComponent(url) {
        let path = String(url).replace(/[?#].*$/, '').replace(/\/+$/, '');
        path = path.slice(path.lastIndexOf('/') + 1);
        try {
            path = decodeURIComponent(path);
        } catch (error) {
            // keep it encoded
        }
        return clean(path);
    }

    // A reason that begins with the node's own label ("IMG_0005.jpg: the camera…") is shown without it.
    function reasonText(node) {
        const reason = clean(node.line.reason || '').trim();
        const label = labelOf(node);
        if (label && reason.startsWith(label + ': ')) return reason.slice(label.length + 2);
        return reason || 'no reason given';
    }

    function percentOf(line) {
        if (line.indeterminate || line.total < 0) return null;
        if (line.state === 'finished') return 100;
        let fraction = typeof line.fraction === 'number' ? line.fraction
            : (line.total > 0 ? Math.max(0, line.completed) / line.total : 0);
        // Rounded down, and 100% only when done, as the terminal shows it.
        return Math.min(99, Math.max(0, Math.floor(fraction * 100 + 1e-9)));
    }

    function isBytes(line) {
        return line.kind === FILE_KIND || (typeof line.fileOperationKind === 'string' && line.fileOperationKind !== '');
    }

    function bytes(count) {
        const units = ['KB', 'MB', 'GB', 'TB', 'PB'];
        if (Math.abs(count) < 1000) return count === 1 ? '1 byte' : count + ' bytes';
        let value = count;
        let unit = -1;
        do {
            value /= 1000;
            unit += 1;
        } while (Math.abs(value) >= 999.95 && unit < units.length - 1);
        const digits = unit === 0 ? 0 : (unit === 1 ? 1 : 2);
        return value.toFixed(digits) + ' ' + units[unit];
    }

    function countsOf(line) {
        if (typeof line.additionalDescription === 'string') return clean(line.additionalDescription).trim();
        if (line.indeterminate || line.total < 0 || line.completed < 0) return '';
        if (isInteger(line.fileTotalCount) && line.fileTotalCount > 0) {
            return (line.fileCompletedCount || 0) + ' of ' + line.fileTotalCount + ' files';
        }
        if (isBytes(line)) return bytes(line.completed) + ' of ' + bytes(line.total);
        return line.completed + ' of ' + line.total;
    }

    function duration(seconds) {
        const total = Math.max(0, Math.round(seconds));
        if (total < 60) return total + 's';
        if (total < 3600) return Math.floor(total / 60) + 'm ' + String(total % 60).padStart(2, '0') + 's';
        const minutes = Math.floor(total / 60);
        return Math.floor(minutes / 60) + 'h ' + String(minutes % 60).padStart(2, '0') + 'm';
    }

    function stateText(node) {
        switch (node.line.state) {
        case 'failed': return 'failed: ' + reasonText(node);
        case 'cancelled': return 'cancelled';
        case 'paused': return 'paused';
        case 'finished': return 'done';
        default: return '';
        }
    }

    function failedNote(line) {
        const count = line.failedBelow;
        return isInteger(count) && count > 0 ? ' · ' + count + ' failed' : '';
    }

    // The root's final state in words: what ended, how, and what failed (first failure named).
    function summaryText() {
        const line = root.line;
        const label = labelOf(root) || 'The work';
        let text;
        if (line.state === 'failed') {
            text = label + ' failed: ' + reasonText(root);
        } else if (line.state === 'cancelled') {
            const percent = percentOf(line);
            text = label + ': cancelled' + (percent !== null ? ' at ' + percent + '%' : '');
        } else {
            const counts = countsOf(line);
            text = label + ': done' + (counts ? ', ' + counts : '');
        }
        const failedCount = isInteger(line.failedBelow) ? line.failedBelow : 0;
        if (failedCount > 0) {
            text += ' · ' + failedCount + ' failed';
            const first = failures.find(function (node) { return node !== root; });
            if (first) text += '; first: ' + (labelOf(first) || 'a part') + ': ' + reasonText(first);
        }
        return MARKS[line.state] + ' ' + text;
    }

    // --- Announcements ----------------------------------------------------------------------------------

    function announceFailure(node) {
        if (node === root) return;
        const item = document.createElement('li');
        item.className = 'outcome-failed';
        const mark = document.createElement('span');
        mark.className = 'mark';
        mark.setAttribute('aria-hidden', 'true');
        mark.textContent = MARKS.failed;
        item.appendChild(mark);
        item.appendChild(document.createTextNode(' ' + (labelOf(node) || 'a part') + ' failed: ' + reasonText(node)));
        elements.outcomes.appendChild(item);
        elements.outcomesSection.hidden = false;
    }

    function setConnection(text) {
        if (elements.connection.textContent !== text) elements.connection.textContent = text;
        elements.connection.dataset.state = text.split(/[:…]/)[0].trim();
    }

    function showError(text) {
        elements.error.textContent = text;
        elements.error.hidden = false;
    }

    // --- Commands ---------------------------------------------------------------------------------------

    function loadToken() {
        return fetch('token', { cache: 'no-store', credentials: 'same-origin' }).then(function (response) {
            if (response.status === 404) {
                setReadOnly('read only');
                return null;
            }
            if (!response.ok) {
                setReadOnly('read only: commands unavailable (the server answered ' + response.status + ')');
                return null;
            }
            return response.text().then(function (text) {
                const value = text.trim();
                if (!/^[0-9A-Za-z]{1,128}$/.test(value)) {
                    setReadOnly('read only: the server sent no usable token');
                    return null;
                }
                token = value;
                readOnly = false;
                elements.mode.hidden = true;
                scheduleFrame();
                return value;
            });
        }).catch(function () {
            setReadOnly('read only: commands unavailable');
            return null;
        });
    }

    function setReadOnly(text) {
        readOnly = true;
        token = null;
        elements.mode.textContent = '· ' + text;
        elements.mode.hidden = false;
        scheduleFrame();
    }

    const VERBS = { pause: 'pause', resume: 'resume', cancel: 'cancel' };

    function send(command, node, button, retried) {
        if (!token) return;
        button.disabled = true;
        const body = JSON.stringify({ v: 1, command: command, id: node.id });
        fetch('commands', {
            method: 'POST',
            headers: { 'ProgressTree-Token': token, 'Content-Type': 'application/json' },
            body: body,
            cache: 'no-store',
            credentials: 'same-origin',
        }).then(function (response) {
            if (response.ok) {
                elements.error.hidden = true;
                return;
            }
            if (response.status === 403 && !retried) {
                // The server may have restarted with a new token: read it again, and try once more.
                const old = token;
                return loadToken().then(function (fresh) {
                    if (fresh && fresh !== old) {
                        send(command, node, button, true);
                    } else {
                        fail('the server refused it (403: not allowed)');
                    }
                });
            }
            fail('the server answered ' + response.status + (response.statusText ? ' ' + response.statusText : ''));
        }).catch(function () {
            fail('the server could not be reached');
        }).then(function () {
            button.disabled = false;
        });

        function fail(why) {
            showError('Could not ' + VERBS[command] + ' “' + (labelOf(node) || 'the work') + '”: ' + why + '.');
        }
    }

    elements.tree.addEventListener('click', function (event) {
        const button = event.target.closest('button[data-command]');
        if (!button) return;
        const row = button.closest('li[data-id]');
        const node = row && nodes.get(Number(row.dataset.id));
        if (!node || node.ended) return;
        send(button.dataset.command, node, button, false);
    });

    // --- Drawing ------------------------------------------------------------------------------------------

    function scheduleFrame() {
        if (framePending) return;
        framePending = true;
        window.requestAnimationFrame(function () {
            framePending = false;
            draw();
        });
    }

    // The rows to show, in order: each node, then its children (unless it ended: a finished subtree
    // collapses), at most SHOWN_CHILDREN of them plus the failed ones and the last finished ones, and a
    // "+N more" row for the others.
    function visibleRows() {
        const list = [];
        if (!root) return list;
        (function walk(node) {
            list.push({ key: 'n' + node.id, node: node, depth: node.depth });
            if (node.ended && node !== root) return;
            const children = node.children;
            if (children.length === 0) return;
            // The most recent finished and cancelled children stay (KEPT_FINISHED), and the most recent
            // failed ones (SHOWN_CHILDREN); older ones give way. Of the others, the first SHOWN_CHILDREN.
            const kept = new Set();
            keepLatest(children, kept, function (child) { return child.ended && child.line.state !== 'failed'; },
                KEPT_FINISHED);
            keepLatest(children, kept, function (child) { return child.ended && child.line.state === 'failed'; },
                SHOWN_CHILDREN);
            let shown = 0;
            let hiddenRunning = 0;
            let hiddenDone = 0;
            for (const child of children) {
                if (child.ended) {
                    if (kept.has(child)) walk(child); else hiddenDone += 1;
                } else if (shown < SHOWN_CHILDREN) {
                    shown += 1;
                    walk(child);
                } else {
                    hiddenRunning += 1;
                }
            }
            if (hiddenRunning + hiddenDone > 0) {
                list.push({ key: 'm' + node.id, more: { running: hiddenRunning, done: hiddenDone }, depth: node.depth + 1 });
            }
        })(root);
        return list;
    }

    // Adds to `kept` the `count` children that match and ended last.
    function keepLatest(children, kept, matches, count) {
        const matching = children.filter(matches);
        if (matching.length > count) {
            matching.sort(function (a, b) { return b.endOrder - a.endOrder; });
            matching.length = count;
        }
        for (const child of matching) kept.add(child);
    }

    function draw() {
        const wanted = visibleRows();
        const seen = new Set();
        let cursor = elements.tree.firstChild;
        for (const item of wanted) {
            seen.add(item.key);
            let row = rows.get(item.key);
            if (!row) {
                row = item.more ? createMoreRow(item.key) : createRow(item.node);
                rows.set(item.key, row);
            }
            if (item.more) updateMoreRow(row, item); else updateRow(row, item);
            if (row.element !== cursor) {
                elements.tree.insertBefore(row.element, cursor);
            } else {
                cursor = cursor.nextSibling;
            }
        }
        for (const [key, row] of rows) {
            if (!seen.has(key)) {
                row.element.remove();
                rows.delete(key);
            }
        }
        if (root) {
            const label = labelOf(root);
            const percent = percentOf(root.line);
            const title = (percent !== null && !root.ended ? percent + '% · ' : '') + (label || 'Progress');
            if (document.title !== title) document.title = title;
            if (elements.title.textContent !== (label || 'Progress')) elements.title.textContent = label || 'Progress';
        }
    }

    function part(tag, className, parent) {
        const element = document.createElement(tag);
        if (className) element.className = className;
        parent.appendChild(element);
        return element;
    }

    function createRow(node) {
        const element = document.createElement('li');
        element.className = 'row';
        element.dataset.id = String(node.id);
        if (node === root) element.dataset.root = 'true';
        const label = part('div', 'label', element);
        const mark = part('span', 'mark', label);
        mark.setAttribute('aria-hidden', 'true');
        const name = part('span', 'name', label);
        name.id = 'name-' + node.id;
        const note = part('span', 'note', label);
        const outcome = part('span', 'outcome', label);
        // A failed node's reason: a line of its own under the row, as wide as the row.
        const reason = part('div', 'reason', element);
        const bar = part('div', 'bar', element);
        bar.setAttribute('role', 'progressbar');
        bar.setAttribute('aria-valuemin', '0');
        bar.setAttribute('aria-valuemax', '100');
        bar.setAttribute('aria-labelledby', name.id);
        const fill = part('div', 'fill', bar);
        const percent = part('span', 'percent', element);
        percent.setAttribute('aria-hidden', 'true');  // the progressbar says it
        const counts = part('span', 'counts', element);
        const rate = part('span', 'rate', element);
        const remaining = part('span', 'remaining', element);
        const actions = part('span', 'actions', element);
        return {
            element: element,
            parts: { mark, name, note, outcome, reason, bar, fill, percent, counts, rate, remaining, actions },
            version: -1, depth: -1, buttons: null, label: null,
        };
    }

    function setText(element, text) {
        if (element.textContent !== text) element.textContent = text;
    }

    function updateRow(row, item) {
        const node = item.node;
        if (row.depth !== item.depth) {
            row.depth = item.depth;
            row.element.style.setProperty('--depth', String(item.depth));
            row.element.dataset.depth = String(item.depth);
        }
        const buttons = wantedButtons(node);
        const buttonKey = buttons.join(' ');
        if (row.version === node.version && row.buttons === buttonKey) return;
        row.version = node.version;
        const line = node.line;
        const parts = row.parts;
        const state = line.state;
        const indeterminate = !FINAL.has(state) && (line.indeterminate === true || line.total < 0);
        row.element.dataset.state = state;
        row.element.classList.toggle('indeterminate', indeterminate);

        const label = labelOf(node);
        setText(parts.mark, indeterminate && state === 'running' ? '' : MARKS[state]);
        setText(parts.name, label);
        parts.name.classList.toggle('unnamed', !label);
        if (!label) {
            parts.bar.setAttribute('aria-label', node.parent ? 'part of ' + (labelOf(node.parent) || 'the work') : 'the work');
            parts.bar.removeAttribute('aria-labelledby');
        } else if (!parts.bar.hasAttribute('aria-labelledby')) {
            parts.bar.removeAttribute('aria-label');
            parts.bar.setAttribute('aria-labelledby', parts.name.id);
        }
        setText(parts.note, node.children.length > 0 || node === root ? failedNote(line) : '');
        const outcome = stateText(node);
        const failed = state === 'failed';
        setText(parts.outcome, outcome ? (label ? ' — ' : '') + (failed ? 'failed: ' : outcome) : '');
        setText(parts.reason, failed ? reasonText(node) : '');

        const percent = percentOf(line);
        const counts = countsOf(line);
        if (percent === null) {
            parts.bar.removeAttribute('aria-valuenow');
            parts.bar.setAttribute('aria-valuetext', [indeterminate ? 'in progress' : '', counts].filter(Boolean).join(', '));
            parts.fill.style.transform = '';
            setText(parts.percent, '');
        } else {
            parts.bar.setAttribute('aria-valuenow', String(percent));
            const words = [percent + '%'];
            if (counts) words.push(counts);
            if (outcome) words.push(outcome);
            parts.bar.setAttribute('aria-valuetext', words.join(', '));
            const fraction = state === 'finished' ? 1 : Math.max(0, Math.min(1, typeof line.fraction === 'number' ? line.fraction : percent / 100));
            parts.fill.style.transform = 'scaleX(' + fraction.toFixed(4) + ')';
            setText(parts.percent, percent + '%');
        }
        setText(parts.counts, counts);
        const live = !FINAL.has(state);
        const estimate = node === root || isBytes(line) ? node.estimate : null;
        const rate = typeof line.throughput === 'number' ? line.throughput : estimate && estimate.throughput;
        const throughput = live && typeof rate === 'number' && rate > 0 ? bytes(Math.round(rate)) + '/s' : '';
        setText(parts.rate, throughput);
        const left = typeof line.timeRemaining === 'number' ? line.timeRemaining : estimate && estimate.timeRemaining;
        const remaining = live && typeof left === 'number' && isFinite(left) ? duration(left) + ' left' : '';
        setText(parts.remaining, remaining);

        if (row.buttons !== buttonKey || row.label !== label) {
            row.buttons = buttonKey;
            row.label = label;
            drawButtons(parts.actions, buttons, label);
        }
    }

    function wantedButtons(node) {
        if (!token || readOnly || finished || node.ended) return [];
        const line = node.line;
        const buttons = [];
        if (line.pausable === true) buttons.push(line.state === 'paused' ? 'resume' : 'pause');
        if (line.cancellable === true) buttons.push('cancel');
        return buttons;
    }

    const BUTTON_TEXT = { pause: 'Pause', resume: 'Resume', cancel: 'Cancel' };

    function drawButtons(container, buttons, label) {
        const focused = container.contains(document.activeElement) ? document.activeElement.dataset.command : null;
        while (container.firstChild) container.removeChild(container.firstChild);
        for (const command of buttons) {
            const button = document.createElement('button');
            button.type = 'button';
            button.dataset.command = command;
            button.className = 'command command-' + command;
            button.textContent = BUTTON_TEXT[command];
            button.setAttribute('aria-label', BUTTON_TEXT[command] + ' ' + (label || 'this part'));
            container.appendChild(button);
            if (focused && (focused === command || (focused === 'pause' && command === 'resume')
                || (focused === 'resume' && command === 'pause'))) {
                button.focus();
            }
        }
    }

    function createMoreRow(key) {
        const element = document.createElement('li');
        element.className = 'row more';
        element.dataset.more = key.slice(1);
        const label = part('div', 'label', element);
        const name = part('span', 'name', label);
        return { element: element, parts: { name: name }, text: null, depth: -1 };
    }

    function updateMoreRow(row, item) {
        if (row.depth !== item.depth) {
            row.depth = item.depth;
            row.element.style.setProperty('--depth', String(item.depth));
            row.element.dataset.depth = String(item.depth);
        }
        const more = item.more;
        let text;
        if (more.running > 0) {
            text = '+' + (more.running + more.done) + ' more' + (more.done > 0 ? ' (' + more.done + ' done)' : '');
        } else {
            text = '+' + more.done + ' more done';
        }
        setText(row.parts.name, text);
    }

    // --- Start ---------------------------------------------------------------------------------------------

    if (typeof window.EventSource !== 'function') {
        setConnection('this browser cannot read the event stream');
        return;
    }
    loadToken();
    connect();
})();
