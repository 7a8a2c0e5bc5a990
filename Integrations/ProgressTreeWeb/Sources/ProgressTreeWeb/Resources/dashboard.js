// ProgressTree's web dashboard: draws a progress tree served as Server-Sent Events (Docs/WireFormat.md,
// "Over HTTP") and sends Pause / Resume / Cancel back as the wire format's commands. Plain JavaScript, no
// build step, nothing from another host. Every URL is relative, so the page works wherever an application
// or a reverse proxy serves it ("/progress/jobs/42/"). Nothing from the stream is ever inserted as HTML:
// names and reasons are set with textContent, with control and bidirectional-override characters shown as
// spaces.
'use strict';

(function () {
    // How many children of one node get a row of their own; the others are counted in a "+N more" row.
    const SHOWN_CHILDREN = 50;
    // How many finished (or cancelled) children of a node stay in sight, most recent first, as the
    // terminal's keptFinishedChildren. Failed children stay: their reasons matter.
    const KEPT_FINISHED = 3;
    // The least time between two milestones the live region announces, unless the root crosses a quarter.
    const ANNOUNCE_INTERVAL = 10000;
    // How many announcements the live region keeps (older ones were read already).
    const KEPT_ANNOUNCEMENTS = 50;
    // How many lines of a snapshot may wait for their parent's line (see `apply`); more are dropped.
    const WAITING_LINES = 10000;
    const FINAL = new Set(['cancelled', 'failed', 'finished']);
    const STATES = new Set(['running', 'paused', 'cancelled', 'failed', 'finished']);
    const MARKS = { running: '•', paused: '‖', cancelled: '✗', failed: '!', finished: '✓', queued: '◦' };
    const FILE_KIND = 'NSProgressKindFile';

    const elements = {
        title: document.getElementById('title'),
        connection: document.getElementById('connection'),
        reconnect: document.getElementById('reconnect'),
        mode: document.getElementById('mode'),
        summary: document.getElementById('summary'),
        summaryMark: document.getElementById('summary-mark'),
        summaryText: document.getElementById('summary-text'),
        error: document.getElementById('error'),
        tree: document.getElementById('tree'),
        outcomesSection: document.getElementById('outcomes-section'),
        outcomes: document.getElementById('outcomes'),
        announcements: document.getElementById('announcements'),
    };

    // One run of the tree as the stream told it (all of it is dropped when the server names another run).
    let run = newRun(null);
    let source = null;
    let unsupportedVersion = null;

    // Commands.
    let token = null;            // the server's token; null while unknown or on a read-only server
    let readOnly = false;

    // Rendering: at most one frame per animation frame, whatever the number of events.
    let framePending = false;
    const rows = new Map();      // row key -> { element, parts, ... }

    function newRun(id) {
        return {
            id: id,                  // the server's name of the run (its `run` event), null until named
            nodes: new Map(),        // the last line of each id
            root: null,
            endCounter: 0,           // orders the ends of nodes, for the finished children kept in sight
            failures: [],            // failed nodes, in the order their failure was seen
            namedSinceOpen: null,    // ids named since the connection opened, until `synced`
            waiting: new Map(),      // parent id -> lines of a snapshot named before their parent, until `synced`
            waitingCount: 0,
            finished: false,         // the root's final line was applied: the stream is over
            spoken: { started: false, time: 0, quarter: -1, state: null },
        };
    }

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
        const record = parseObject(data);
        if (record === null || record.v === undefined) return null;
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

    function parseObject(data) {
        let value;
        try {
            value = JSON.parse(data);
        } catch (error) {
            return null;
        }
        return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;
    }

    function apply(record) {
        if (run.finished) return;
        if (run.namedSinceOpen) run.namedSinceOpen.add(record.id);
        let node = run.nodes.get(record.id);
        if (node) {
            if (node.ended) return;                       // a later line of a node that ended: it ended with it
            if (node.parentId !== record.parent) return;  // a node never changes parent
        } else {
            let parent = null;
            if (record.parent === null) {
                if (run.root !== null) return;            // a second root
            } else {
                parent = run.nodes.get(record.parent);
                if (!parent && run.namedSinceOpen !== null) {
                    wait(record);                         // a snapshot's kept failure, before its parent
                    return;
                }
                if (!parent || parent.ended) return;      // unknown parent, or named below a node that ended
            }
            node = {
                id: record.id, parentId: record.parent, parent: parent, children: [],
                depth: parent ? parent.depth + 1 : 0, line: null, version: 0, ended: false, endOrder: 0,
            };
            run.nodes.set(node.id, node);
            if (parent) parent.children.push(node); else run.root = node;
        }
        node.line = record;
        node.version += 1;
        sample(node, record);
        adoptWaiting(node);
        if (FINAL.has(record.state)) end(node, record.state);
        if (node === run.root) {
            if (node.ended) {
                streamEnded();
            } else {
                milestone();
            }
        }
        scheduleFrame();
    }

    // A snapshot names the kept failures (a failed node and what its failure cancelled) before the root
    // when the work ended (Docs/WireFormat.md, "The end"): such a line waits for its parent's line, and is
    // applied right after it, before that parent's own end ends its subtree. Lines still waiting at `synced`
    // name no node of the tree, and are dropped.
    function wait(record) {
        if (run.waitingCount >= WAITING_LINES) return;
        const lines = run.waiting.get(record.parent);
        if (lines) lines.push(record); else run.waiting.set(record.parent, [record]);
        run.waitingCount += 1;
    }

    function clearWaiting() {
        run.waiting.clear();
        run.waitingCount = 0;
    }

    function adoptWaiting(node) {
        const lines = run.waiting.get(node.id);
        if (!lines) return;
        run.waiting.delete(node.id);
        run.waitingCount -= lines.length;
        for (const line of lines) apply(line);
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
        node.endOrder = ++run.endCounter;
        if (node.line.state === 'failed') {
            run.failures.push(node);
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

    // After a reconnection to the same run, a node the page knew that the server did not name before
    // `synced` finished while the page was away, and left the tree.
    function synced() {
        if (run.namedSinceOpen === null) return;
        const named = run.namedSinceOpen;
        run.namedSinceOpen = null;
        clearWaiting();
        for (const node of run.nodes.values()) {
            if (node.ended || node === run.root || named.has(node.id)) continue;
            node.line = finishedLine(node.line, 'finished');
            node.version += 1;
            end(node, 'finished');
        }
        setConnection(run.finished ? connectionEndText() : 'live');
        scheduleFrame();
    }

    // The server names its run first on every connection. Another run than the one shown (the server
    // restarted, or another instance answered) replaces everything the page knew: it starts from that
    // run's lines, as a fresh page does, and never merges the two.
    function namedRun(id) {
        if (run.id === id) return;
        const previous = run.id;
        if (previous !== null || run.root !== null) {
            const wasOpen = run.namedSinceOpen !== null;
            const focusInTree = elements.tree.contains(document.activeElement);
            run = newRun(id);
            if (wasOpen) run.namedSinceOpen = new Set();
            clearPage();
            // The focused control went with its row: the focus waits on the tree, not the page's body, and
            // goes to the new run's first control as soon as it is drawn.
            if (focusInTree) focusFirstControlWhenDrawn();
            announce('A new run started on the server.');
            loadToken();  // a new server process has a new token
        } else {
            run.id = id;
        }
    }

    function clearPage() {
        for (const row of rows.values()) row.element.remove();
        rows.clear();
        while (elements.tree.firstChild) elements.tree.removeChild(elements.tree.firstChild);
        while (elements.outcomes.firstChild) elements.outcomes.removeChild(elements.outcomes.firstChild);
        elements.outcomesSection.hidden = true;
        elements.summary.hidden = true;
        elements.error.hidden = true;
        scheduleFrame();
    }

    // The page reconnects itself, with a new EventSource, rather than letting the browser reconnect with
    // Last-Event-ID: a server may then leave out the nodes that did not change, and the page could not tell
    // them from the nodes that finished while it was away. A new connection gets every node still in the
    // tree before `synced`, so a node it does not name has ended.
    let retryDelay = 1000;
    let reconnectTimer = null;
    let lostSaid = false;

    function connect() {
        reconnectTimer = null;
        elements.reconnect.hidden = true;
        const current = new EventSource('events');
        source = current;
        current.onopen = function () {
            if (current !== source) return;
            run.namedSinceOpen = new Set();
            clearWaiting();
            setConnection('syncing…');
        };
        current.onmessage = function (event) {
            if (current !== source) return;
            const record = parseLine(event.data);
            if (record) apply(record);
        };
        current.addEventListener('run', function (event) {
            if (current !== source) return;
            const data = parseObject(event.data);
            if (data && data.v === 1 && typeof data.run === 'string' && data.run !== '') namedRun(data.run);
        });
        current.addEventListener('synced', function () {
            if (current !== source) return;
            retryDelay = 1000;
            lostSaid = false;
            synced();
        });
        current.addEventListener('ended', function (event) {
            if (current !== source) return;
            const data = parseObject(event.data) || {};
            serverEnded(data.ended === 'stopping' ? 'the server stopped' : 'no longer served');
        });
        current.onerror = function () {
            current.close();
            if (run.finished || current !== source || reconnectTimer !== null) return;
            run.namedSinceOpen = null;
            clearWaiting();
            setConnection('reconnecting…');
            if (!lostSaid) {
                lostSaid = true;
                announce('The connection to the server was lost; reconnecting.');
            }
            reconnectTimer = window.setTimeout(connect, retryDelay);
            retryDelay = Math.min(retryDelay * 2, 10000);
        };
    }

    // The server ended the stream (it stops, or no longer serves this tree): the page keeps the last state
    // it was sent, says so, and offers to connect again. The rows' controls go (nothing can be sent any
    // more): the focus, if it was in the tree or nowhere, goes to Reconnect, the one control left, rather
    // than to the page's body.
    function serverEnded(why) {
        if (source) source.close();
        source = null;
        if (run.finished) return;
        setConnection('ended: ' + why);
        elements.reconnect.hidden = false;
        const active = document.activeElement;
        if (!active || active === document.body || elements.tree.contains(active)) {
            focusWanted = false;
            elements.reconnect.focus();
        }
        announce('The stream ended: ' + why + '. The page shows the last state it was sent.');
        scheduleFrame();
    }

    elements.reconnect.addEventListener('click', function () {
        if (reconnectTimer !== null) window.clearTimeout(reconnectTimer);
        retryDelay = 1000;
        setConnection('connecting…');
        // The button hides as the page connects: the focus goes to the tree's first control once drawn.
        focusFirstControlWhenDrawn();
        connect();
    });

    // The root's final line is the end of the stream: the page keeps the final state and stops reading.
    // The rows are drawn now, in the task that shows the summary, not at the next frame: the summary of the
    // end never stands above rows from before it (a background tab may get no frame for a while).
    function streamEnded() {
        run.finished = true;
        if (source) source.close();
        draw();
        setConnection(connectionEndText());
        const root = run.root;
        const line = root.line;
        const failedBelow = isInteger(line.failedBelow) ? line.failedBelow : 0;
        elements.summaryMark.textContent = MARKS[line.state];
        elements.summaryText.textContent = ' ' + outcomeSentence();
        elements.summary.dataset.outcome = line.state === 'finished' && failedBelow > 0 ? 'failures' : line.state;
        elements.summary.hidden = false;
        announce(outcomeSentence());
    }

    // One word: the summary below it says the rest, and the root's row its reason (Docs/WebDashboard.md).
    function connectionEndText() {
        if (!run.root) return 'finished';
        const line = run.root.line;
        if (line.state === 'failed') return 'failed';
        if (line.state === 'cancelled') return 'cancelled';
        return 'finished';
    }

    // --- Words ---------------------------------------------------------------------------------------

    // Control characters and the characters that reorder text (bidirectional embeddings, overrides,
    // isolates and marks) are shown as spaces, as the terminal shows control characters: a name cannot
    // turn the rest of its row, or the page's title, around.
    const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
    function clean(text) {
        return String(text).replace(UNSAFE, ' ');
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
        const fraction = typeof line.fraction === 'number' ? line.fraction
            : (line.total > 0 ? Math.max(0, line.completed) / line.total : 0);
        // Rounded down, and 100% only when done, as the terminal shows it.
        return Math.min(99, Math.max(0, Math.floor(fraction * 100 + 1e-9)));
    }

    // A node that exists but has not started: no units yet (0 of 0), nothing below it, running. A server
    // makes a job's node when the job is queued, and the job sets its total when it starts.
    function isQueued(node) {
        const line = node.line;
        return node !== run.root && line.state === 'running' && line.total === 0 && line.completed === 0
            && node.children.length === 0;
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

    // "about 20 seconds", "about 1 minute", "about 3 hours": a time left said in words.
    function durationWords(seconds) {
        const total = Math.max(1, Math.round(seconds));
        function unit(count, name) { return 'about ' + count + ' ' + name + (count === 1 ? '' : 's'); }
        if (total < 10) return unit(total, 'second');
        if (total < 60) return unit(Math.round(total / 5) * 5, 'second');
        if (total < 3600) return unit(Math.round(total / 60), 'minute');
        return unit(Math.round(total / 3600), 'hour');
    }

    function stateText(node) {
        switch (node.line.state) {
        case 'failed': return 'failed: ' + reasonText(node);
        case 'cancelled': return 'cancelled';
        case 'paused': return 'paused';
        case 'finished': return 'done';
        default: return isQueued(node) ? 'queued' : '';
        }
    }

    // " · 2 failed" after the name of a node with failures below it; nothing on a node that failed itself,
    // whose row gives its reason instead (as the terminal's line does).
    function failedNote(line) {
        const count = line.failedBelow;
        return line.state !== 'failed' && isInteger(count) && count > 0 ? ' · ' + count + ' failed' : '';
    }

    // How many nodes were cancelled on purpose, as a person would count them: the nodes seen cancelled
    // whose parent was not cancelled or failed too (a photo cancelled takes its download with it; a
    // failure cancels what is below it).
    function cancelledOnPurpose() {
        let count = 0;
        for (const node of run.nodes.values()) {
            if (node === run.root || node.line.state !== 'cancelled') continue;
            const parentState = node.parent ? node.parent.line.state : null;
            if (parentState !== 'cancelled' && parentState !== 'failed') count += 1;
        }
        return count;
    }

    // The root's outcome in one sentence, each count once (Docs/WebDashboard.md, "The page"): "Importing 12
    // photos failed: 8 of 12, 4 failed; first: IMG_0003.jpg: the camera stopped answering." The page's
    // summary and its last announcement.
    function outcomeSentence() {
        const root = run.root;
        const line = root.line;
        const label = labelOf(root) || 'The work';
        const failedCount = isInteger(line.failedBelow) ? line.failedBelow : 0;
        const details = [];
        let head;
        if (line.state === 'finished') {
            head = label + ' finished';
        } else if (line.state === 'cancelled') {
            const percent = percentOf(line);
            head = label + ' cancelled' + (percent !== null ? ' at ' + percent + '%' : '');
        } else {
            head = label + ' failed';
            if (failedCount === 0) details.push(withoutStop(reasonText(root)));
        }
        const counts = countsOf(line);
        if (counts) details.push(counts);
        if (failedCount > 0) details.push(failedCount + ' failed');
        const cancelled = line.state === 'cancelled' ? 0 : cancelledOnPurpose();
        if (cancelled > 0) details.push(cancelled + ' cancelled');
        let text = head + (details.length > 0 ? ': ' + details.join(', ') : '');
        const first = run.failures.find(function (node) { return node !== root; });
        if (failedCount > 0 && first) text += '; first: ' + (labelOf(first) || 'a part') + ': ' + withoutStop(reasonText(first));
        return text + '.';
    }

    function withoutStop(text) {
        return text.replace(/[.。]+$/, '');
    }

    // --- Announcements: one polite live region, milestones only ------------------------------------------

    function announce(text) {
        const item = document.createElement('p');
        item.textContent = text;
        elements.announcements.appendChild(item);
        while (elements.announcements.childElementCount > KEPT_ANNOUNCEMENTS) {
            elements.announcements.removeChild(elements.announcements.firstElementChild);
        }
    }

    // After each line of the root: a start sentence first, then a sentence when the root crosses a quarter
    // or, if it moved, once ANNOUNCE_INTERVAL passed since the last one; a pause and a resume as they come.
    function milestone() {
        const root = run.root;
        const line = root.line;
        const spoken = run.spoken;
        const label = labelOf(root) || 'The work';
        const percent = percentOf(line);
        const now = performance.now();
        if (!spoken.started) {
            spoken.started = true;
            spoken.time = now;
            spoken.state = line.state;
            spoken.quarter = percent === null ? -1 : Math.floor(percent / 25);
            const counts = countsOf(line);
            if (line.state === 'paused') {
                announce(label + ': paused' + (percent !== null ? ' at ' + percent + ' percent' : '') + '.');
            } else if (!percent) {
                announce(label + ' started' + (counts ? ': ' + counts : '') + '.');
            } else {
                announce(progressSentence(root, label, percent));
            }
            return;
        }
        if (line.state !== spoken.state) {
            const was = spoken.state;
            spoken.state = line.state;
            if (line.state === 'paused') {
                spoken.time = now;
                announce(label + ' paused' + (percent !== null ? ' at ' + percent + ' percent' : '') + '.');
                return;
            }
            if (was === 'paused') {
                spoken.time = now;
                announce(label + ' resumed.');
                return;
            }
        }
        if (line.state !== 'running' || percent === null) return;
        const quarter = Math.floor(percent / 25);
        const crossed = quarter > spoken.quarter;
        const due = now - spoken.time >= ANNOUNCE_INTERVAL && percent !== spoken.percent;
        if (!crossed && !due) return;
        spoken.quarter = Math.max(spoken.quarter, quarter);
        spoken.time = now;
        spoken.percent = percent;
        announce(progressSentence(root, label, percent));
    }

    // "Importing 12 photos: 50 percent, 6 of 12, about 20 seconds left."
    function progressSentence(root, label, percent) {
        const line = root.line;
        const words = [percent + ' percent'];
        const counts = countsOf(line);
        if (counts) words.push(counts);
        const left = typeof line.timeRemaining === 'number' ? line.timeRemaining
            : root.estimate && root.estimate.timeRemaining;
        if (typeof left === 'number' && isFinite(left) && left > 0) words.push(durationWords(left) + ' left');
        return label + ': ' + words.join(', ') + '.';
    }

    function announceFailure(node) {
        if (node === run.root) return;
        const label = labelOf(node) || 'A part';
        const sentence = label + ' failed: ' + withoutStop(reasonText(node)) + '.';
        announce(sentence);
        // And in the Outcomes list, which stays on the page.
        const item = document.createElement('li');
        item.className = 'outcome-failed';
        const mark = document.createElement('span');
        mark.className = 'mark';
        mark.setAttribute('aria-hidden', 'true');
        mark.textContent = MARKS.failed;
        item.appendChild(mark);
        const text = document.createElement('span');
        text.dir = 'auto';
        text.textContent = ' ' + label + ' failed: ' + reasonText(node);
        item.appendChild(text);
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

    // The token is asked for with POST, so that the browser says the page's origin (`Origin`), which the
    // server checks (behind a proxy too, against its allowed origins).
    function loadToken() {
        return fetch('token', { method: 'POST', cache: 'no-store', credentials: 'same-origin' }).then(function (response) {
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

    // A button whose command is under way says so (aria-disabled) and ignores clicks; it is never made
    // `disabled`, which would take the keyboard focus away from it.
    function send(command, node, button, retried) {
        if (!token) return;
        button.setAttribute('aria-disabled', 'true');
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
            const answered = 'the server answered ' + response.status + (response.statusText ? ' ' + response.statusText : '');
            // A server that says why (a job that ended, or that no process runs) says it in plain text.
            if ((response.headers.get('Content-Type') || '').indexOf('text/plain') !== 0) return fail(answered);
            return response.text().then(function (text) {
                // Its own full stop goes: the message ends with one.
                const why = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, 300).replace(/\.$/, '');
                fail(why ? why : answered);
            });
        }).catch(function () {
            fail('the server could not be reached');
        }).then(function () {
            button.removeAttribute('aria-disabled');
        });

        function fail(why) {
            showError('Could not ' + VERBS[command] + ' “' + (labelOf(node) || 'the work') + '”: ' + why + '.');
        }
    }

    elements.tree.addEventListener('click', function (event) {
        const button = event.target.closest('button[data-command]');
        if (!button || button.getAttribute('aria-disabled') === 'true') return;
        const item = button.closest('li[data-id]');
        const node = item && run.nodes.get(Number(item.dataset.id));
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

    // The rows to show, as a tree: each node with its children (unless it ended: a finished subtree
    // collapses), at most SHOWN_CHILDREN of them plus the failed ones and the last finished ones, and a
    // "+N more" row for the others.
    function visibleTree() {
        const root = run.root;
        if (!root) return [];
        function walk(node) {
            const item = { key: 'n' + node.id, node: node, depth: node.depth, children: [] };
            if (node.ended && node !== root) return item;
            const children = node.children;
            if (children.length === 0) return item;
            // The most recent finished and cancelled children stay (KEPT_FINISHED), and the most recent
            // failed ones (SHOWN_CHILDREN); older ones give way. Of the others, the first SHOWN_CHILDREN.
            const kept = new Set();
            keepLatest(children, kept, function (child) { return child.ended && child.line.state !== 'failed'; },
                KEPT_FINISHED);
            keepLatest(children, kept, function (child) { return child.ended && child.line.state === 'failed'; },
                SHOWN_CHILDREN);
            let shown = 0;
            const hidden = { running: 0, done: 0, cancelled: 0, failed: 0 };
            for (const child of children) {
                if (child.ended) {
                    if (kept.has(child)) {
                        item.children.push(walk(child));
                    } else if (child.line.state === 'finished') {
                        hidden.done += 1;
                    } else if (child.line.state === 'cancelled') {
                        hidden.cancelled += 1;
                    } else {
                        hidden.failed += 1;
                    }
                } else if (shown < SHOWN_CHILDREN) {
                    shown += 1;
                    item.children.push(walk(child));
                } else {
                    hidden.running += 1;
                }
            }
            if (hidden.running + hidden.done + hidden.cancelled + hidden.failed > 0) {
                item.children.push({ key: 'm' + node.id, more: hidden, depth: node.depth + 1, children: [] });
            }
            return item;
        }
        return [walk(root)];
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

    // The rows with a control, in the order of the page, and the control that has the keyboard's focus:
    // a redraw keeps that focus, on the same control, its row's other one, or the next row's.
    function focusedControl() {
        const active = document.activeElement;
        if (!active || !elements.tree.contains(active) || !active.dataset.command) return null;
        const item = active.closest('li[data-key]');
        if (!item) return null;
        const order = Array.from(elements.tree.querySelectorAll('li[data-key]')).map(function (element) {
            return element.dataset.key;
        });
        return { element: active, key: item.dataset.key, command: active.dataset.command, order: order };
    }

    function restoreFocus(focused) {
        if (!focused || document.activeElement === focused.element) return;
        if (focused.element.isConnected && elements.tree.contains(focused.element)) {
            focused.element.focus();
            return;
        }
        function buttonsOf(key) {
            const row = rows.get(key);
            return row && row.parts ? Array.from(row.parts.actions.querySelectorAll('button')) : [];
        }
        const own = buttonsOf(focused.key);
        if (own.length > 0) {
            (own.find(function (button) { return button.dataset.command === focused.command; }) || own[0]).focus();
            return;
        }
        const at = focused.order.indexOf(focused.key);
        const after = focused.order.slice(at + 1);
        const before = focused.order.slice(0, at).reverse();
        for (const key of after.concat(before)) {
            const buttons = buttonsOf(key);
            if (buttons.length > 0) {
                buttons[0].focus();
                return;
            }
        }
        // No control is left (the work ended): the tree itself, so that the focus stays where it was.
        elements.tree.focus();
    }

    // The focus waits on the tree until a control is drawn there, then goes to the first one (where Tab
    // from the top of the page arrives): after a new run replaced the rows, or a press on Reconnect.
    let focusWanted = false;
    function focusFirstControlWhenDrawn() {
        focusWanted = true;
        elements.tree.focus();
    }

    function giveWantedFocus() {
        if (!focusWanted) return;
        if (document.activeElement !== elements.tree) {
            focusWanted = false;  // the user went elsewhere meanwhile
            return;
        }
        const control = elements.tree.querySelector('button[data-command]');
        if (control) {
            focusWanted = false;
            control.focus();
        }
    }

    function draw() {
        const focused = focusedControl();
        const seen = new Set();
        reconcile(elements.tree, visibleTree(), seen);
        for (const [key, row] of rows) {
            if (!seen.has(key)) {
                row.element.remove();
                rows.delete(key);
            }
        }
        restoreFocus(focused);
        giveWantedFocus();
        const root = run.root;
        if (root) {
            const label = labelOf(root);
            const percent = percentOf(root.line);
            const title = (percent !== null && !root.ended ? percent + '% · ' : '') + (label || 'Progress');
            if (document.title !== title) document.title = title;
            if (elements.title.textContent !== (label || 'Progress')) elements.title.textContent = label || 'Progress';
        } else if (elements.title.textContent !== 'Progress') {
            elements.title.textContent = 'Progress';
            document.title = 'Progress';
        }
    }

    // Puts `items` in `list`, in order, each with its own list of children: moves only what is out of
    // place (a row that keeps its place keeps its focus).
    function reconcile(list, items, seen) {
        let cursor = list.firstChild;
        for (const item of items) {
            seen.add(item.key);
            let row = rows.get(item.key);
            if (!row) {
                row = item.more ? createMoreRow(item.key) : createRow(item.node);
                rows.set(item.key, row);
            }
            if (item.more) updateMoreRow(row, item); else updateRow(row, item);
            if (row.element !== cursor) {
                list.insertBefore(row.element, cursor);
            } else {
                cursor = cursor.nextSibling;
            }
            if (!item.more) {
                if (item.children.length > 0) {
                    if (!row.childList) {
                        row.childList = document.createElement('ul');
                        row.childList.className = 'children';
                        row.element.appendChild(row.childList);
                    }
                    reconcile(row.childList, item.children, seen);
                } else if (row.childList) {
                    row.childList.remove();
                    row.childList = null;
                }
            }
        }
        // What is left after the last item belongs to no item of this list now (a row never changes list).
        while (cursor) {
            const next = cursor.nextSibling;
            cursor.remove();
            cursor = next;
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
        element.className = 'node';
        element.dataset.id = String(node.id);
        element.dataset.key = 'n' + node.id;
        if (node === run.root) element.dataset.root = 'true';
        const line = part('div', 'row', element);
        const label = part('div', 'label', line);
        const mark = part('span', 'mark', label);
        mark.setAttribute('aria-hidden', 'true');
        const name = part('span', 'name', label);
        name.id = 'name-' + node.id;
        name.dir = 'auto';
        const note = part('span', 'note', label);
        const outcome = part('span', 'outcome', label);
        // A failed node's reason: a line of its own under the row, as wide as the row.
        const reason = part('div', 'reason', line);
        reason.dir = 'auto';
        const bar = part('div', 'bar', line);
        bar.setAttribute('role', 'progressbar');
        bar.setAttribute('aria-valuemin', '0');
        bar.setAttribute('aria-valuemax', '100');
        bar.setAttribute('aria-labelledby', name.id);
        const fill = part('div', 'fill', bar);
        const percent = part('span', 'percent', line);
        percent.setAttribute('aria-hidden', 'true');  // the progressbar says it
        const counts = part('span', 'counts', line);
        const rate = part('span', 'rate', line);
        const remaining = part('span', 'remaining', line);
        const actions = part('span', 'actions', line);
        return {
            element: element, line: line, childList: null,
            parts: { mark, name, note, outcome, reason, bar, fill, percent, counts, rate, remaining, actions },
            version: -1, depth: -1, buttons: null, label: null, queued: null,
        };
    }

    function setText(element, text) {
        if (element.textContent !== text) element.textContent = text;
    }

    function updateRow(row, item) {
        const node = item.node;
        if (row.depth !== item.depth) {
            row.depth = item.depth;
            row.line.style.setProperty('--depth', String(item.depth));
            row.element.dataset.depth = String(item.depth);
        }
        const buttons = wantedButtons(node);
        const buttonKey = buttons.join(' ');
        const queued = isQueued(node);
        if (row.version === node.version && row.buttons === buttonKey && row.queued === queued) return;
        row.version = node.version;
        row.queued = queued;
        const line = node.line;
        const parts = row.parts;
        const state = line.state;
        const indeterminate = !FINAL.has(state) && !queued && (line.indeterminate === true || line.total < 0);
        row.element.dataset.state = queued ? 'queued' : state;
        row.line.dataset.state = row.element.dataset.state;
        row.line.classList.toggle('indeterminate', indeterminate);

        const label = labelOf(node);
        setText(parts.mark, indeterminate && state === 'running' ? '' : MARKS[queued ? 'queued' : state]);
        setText(parts.name, label);
        parts.name.classList.toggle('unnamed', !label);
        if (!label) {
            parts.bar.setAttribute('aria-label', node.parent ? 'part of ' + (labelOf(node.parent) || 'the work') : 'the work');
            parts.bar.removeAttribute('aria-labelledby');
        } else if (!parts.bar.hasAttribute('aria-labelledby')) {
            parts.bar.removeAttribute('aria-label');
            parts.bar.setAttribute('aria-labelledby', parts.name.id);
        }
        setText(parts.note, node.children.length > 0 || node === run.root ? failedNote(line) : '');
        const outcome = stateText(node);
        const failed = state === 'failed';
        setText(parts.outcome, outcome ? (label ? ' — ' : '') + (failed ? 'failed: ' : outcome) : '');
        setText(parts.reason, failed ? reasonText(node) : '');

        const percent = queued ? null : percentOf(line);
        const counts = queued ? '' : countsOf(line);
        if (percent === null) {
            parts.bar.removeAttribute('aria-valuenow');
            const words = [queued ? 'queued' : (indeterminate ? 'in progress' : ''), counts];
            parts.bar.setAttribute('aria-valuetext', words.filter(Boolean).join(', ') || outcome || 'no progress yet');
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
        const estimate = node === run.root || isBytes(line) ? node.estimate : null;
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
        if (!token || readOnly || run.finished || node.ended || !source) return [];
        const line = node.line;
        const buttons = [];
        if (line.pausable === true) buttons.push(line.state === 'paused' ? 'resume' : 'pause');
        if (line.cancellable === true) buttons.push('cancel');
        return buttons;
    }

    const BUTTON_TEXT = { pause: 'Pause', resume: 'Resume', cancel: 'Cancel' };

    // The buttons of a row, changed in place: the Pause button becomes the Resume button (the same element,
    // so the keyboard's focus stays on it), and only buttons no longer wanted go.
    function drawButtons(container, buttons, label) {
        const existing = Array.from(container.children);
        function slot(command) { return command === 'cancel' ? 'cancel' : 'toggle'; }
        const bySlot = new Map(existing.map(function (button) { return [button.dataset.slot, button]; }));
        let previous = null;
        for (const command of buttons) {
            let button = bySlot.get(slot(command));
            bySlot.delete(slot(command));
            if (!button) {
                button = document.createElement('button');
                button.type = 'button';
                button.dataset.slot = slot(command);
            }
            button.dataset.command = command;
            button.className = 'command command-' + command;
            setText(button, BUTTON_TEXT[command]);
            button.setAttribute('aria-label', BUTTON_TEXT[command] + ' ' + (label || 'this part'));
            const next = previous ? previous.nextSibling : container.firstChild;
            if (button !== next) container.insertBefore(button, next);
            previous = button;
        }
        for (const button of bySlot.values()) button.remove();
    }

    function createMoreRow(key) {
        const element = document.createElement('li');
        element.className = 'more';
        element.dataset.more = key.slice(1);
        element.dataset.key = key;
        const line = part('div', 'row more', element);
        const label = part('div', 'label', line);
        const name = part('span', 'name', label);
        return { element: element, line: line, parts: null, name: name, depth: -1 };
    }

    // "+950 more running", "+947 more: 449 running, 498 done", "+3 more: 2 done, 1 cancelled".
    function updateMoreRow(row, item) {
        if (row.depth !== item.depth) {
            row.depth = item.depth;
            row.line.style.setProperty('--depth', String(item.depth));
            row.element.dataset.depth = String(item.depth);
        }
        const more = item.more;
        const kinds = [];
        for (const kind of ['running', 'done', 'cancelled', 'failed']) {
            if (more[kind] > 0) kinds.push(more[kind] + ' ' + kind);
        }
        const total = more.running + more.done + more.cancelled + more.failed;
        const text = '+' + total + ' more' + (kinds.length === 1 ? ' ' + kinds[0].replace(/^\d+ /, '') : ': ' + kinds.join(', '));
        setText(row.name, text);
    }

    // --- Start ---------------------------------------------------------------------------------------------

    // A stream ticket (`?ticket=…`, ProgressStreamTickets) was redeemed for a cookie as the page loaded: it
    // leaves the address bar, so that it is not bookmarked, shared or kept in the history.
    const address = new URL(window.location.href);
    if (address.searchParams.has('ticket')) {
        address.searchParams.delete('ticket');
        window.history.replaceState(window.history.state, '', address.pathname + address.search + address.hash);
    }

    if (typeof window.EventSource !== 'function') {
        setConnection('this browser cannot read the event stream');
        return;
    }
    loadToken();
    connect();
})();
