// Kairo's eight scenarios, as Chaining's `kairo` rows run them
// (Benchmarks/Benchmarks/ChainingBenchmarks/KairoBenchmarks.swift), on
// alien-signals: the same graphs, writes and checks, timed the same way, so
// that a `Computed` row and the peer's can be set side by side. Not part
// of CI: see README.md here.
//
//   node --experimental-transform-types kairo-alien-signals.mjs PATH [SAMPLES]
//
// PATH is alien-signals: an installed package (its esm/index.mjs) or a
// checkout of its sources (src/index.ts, run by Node's TypeScript support).
// Each scenario is warmed up, then SAMPLES iterations (1,000 unless given)
// are timed one by one; it prints, as `./compare` does, the median
// iteration's time divided by the scenario's writes, and the fastest's.
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [root, samplesText = '1000'] = process.argv.slice(2);
if (!root) {
  console.error('usage: node --experimental-transform-types kairo-alien-signals.mjs PATH [SAMPLES]');
  process.exit(2);
}
const built = join(resolve(root), 'esm', 'index.mjs');
let entry = built;
if (!existsSync(built)) {
  entry = join(resolve(root), 'src', 'index.ts');
  // The sources import each other as `./x.js`, which their build makes;
  // from the sources, `./x.ts` is what there is.
  registerHooks({
    resolve(specifier, context, next) {
      try {
        return next(specifier, context);
      } catch (error) {
        if (!specifier.endsWith('.js')) throw error;
        return next(specifier.slice(0, -3) + '.ts', context);
      }
    },
  });
}
const { computed, effect, effectScope, endBatch, signal, startBatch } = await import(pathToFileURL(entry).href);

const withBatch = (body) => {
  startBatch();
  body();
  endBatch();
};
// Kairo's stand-in for heavy work, kept from the optimizer.
let sink = 0;
function busy() {
  let total = 0;
  for (let i = 0; i < 100; i++) total++;
  sink += total;
}
function check(holds, what) {
  if (!holds) throw new Error(`check failed: ${what}`);
}
// An iteration of the scenarios with one head: writes 1, then 0 to
// `count - 1`, checking after each; then the effect's runs.
function iterate(head, count, checkAfter, runs, expectedRuns) {
  return () => {
    withBatch(() => head(1));
    runs.count = 0;
    for (let i = 0; i < count; i++) {
      withBatch(() => head(i));
      checkAfter(i);
    }
    check(runs.count === expectedRuns, `${runs.count} effect runs, expected ${expectedRuns}`);
  };
}

const scenarios = [
  {
    name: 'avoidable',
    writes: 1000,
    make() {
      const head = signal(0);
      const first = computed(() => head());
      const second = computed(() => (first(), 0));
      const third = computed(() => (busy(), second() + 1));
      const fourth = computed(() => third() + 2);
      const fifth = computed(() => fourth() + 3);
      const runs = { count: 0 };
      effect(() => {
        fifth();
        busy();
        runs.count++;
      });
      return iterate(head, 1000, (i) => check(fifth() === 6, `avoidable ${i}`), runs, 0);
    },
  },
  {
    name: 'deep',
    writes: 50,
    make() {
      const head = signal(0);
      let current = head;
      for (let i = 0; i < 50; i++) {
        const before = current;
        current = computed(() => before() + 1);
      }
      const last = current;
      const runs = { count: 0 };
      effect(() => {
        last();
        runs.count++;
      });
      return iterate(head, 50, (i) => check(last() === 50 + i, `deep ${i}`), runs, 50);
    },
  },
  {
    name: 'broad',
    writes: 50,
    make() {
      const head = signal(0);
      let last = head;
      const runs = { count: 0 };
      for (let offset = 0; offset < 50; offset++) {
        const current = computed(() => head() + offset);
        const next = computed(() => current() + 1);
        effect(() => {
          next();
          runs.count++;
        });
        last = next;
      }
      return iterate(head, 50, (i) => check(last() === i + 50, `broad ${i}`), runs, 50 * 50);
    },
  },
  {
    name: 'diamond',
    writes: 500,
    make() {
      const head = signal(0);
      const sides = Array.from({ length: 5 }, () => computed(() => head() + 1));
      const sum = computed(() => sides.map((side) => side()).reduce((a, b) => a + b, 0));
      const runs = { count: 0 };
      effect(() => {
        sum();
        runs.count++;
      });
      return iterate(head, 500, (i) => check(sum() === (i + 1) * 5, `diamond ${i}`), runs, 500);
    },
  },
  {
    name: 'triangle',
    writes: 100,
    make() {
      const head = signal(0);
      let current = head;
      const list = [];
      for (let i = 0; i < 10; i++) {
        const before = current;
        list.push(current);
        current = computed(() => before() + 1);
      }
      const sum = computed(() => list.map((value) => value()).reduce((a, b) => a + b, 0));
      const runs = { count: 0 };
      effect(() => {
        sum();
        runs.count++;
      });
      return iterate(head, 100, (i) => check(sum() === 45 + 10 * i, `triangle ${i}`), runs, 100);
    },
  },
  {
    name: 'mux',
    writes: 20,
    make() {
      const heads = Array.from({ length: 100 }, () => signal(0));
      const all = computed(() => Object.fromEntries(heads.map((head) => head()).entries()));
      const split = heads
        .map((_, index) => computed(() => all()[index]))
        .map((value) => computed(() => value() + 1));
      // A block: what an effect returns, alien-signals calls as its cleanup.
      for (const value of split) {
        effect(() => {
          value();
        });
      }
      return () => {
        for (let i = 0; i < 10; i++) {
          withBatch(() => heads[i](i));
          check(split[i]() === i + 1, `mux ${i}`);
        }
        for (let i = 0; i < 10; i++) {
          withBatch(() => heads[i](i * 2));
          check(split[i]() === i * 2 + 1, `mux ${i * 2}`);
        }
      };
    },
  },
  {
    name: 'repeated',
    writes: 100,
    make() {
      const head = signal(0);
      const current = computed(() => {
        let result = 0;
        for (let i = 0; i < 30; i++) result += head();
        return result;
      });
      const runs = { count: 0 };
      effect(() => {
        current();
        runs.count++;
      });
      return iterate(head, 100, (i) => check(current() === i * 30, `repeated ${i}`), runs, 100);
    },
  },
  {
    name: 'unstable',
    writes: 100,
    make() {
      const head = signal(0);
      const double = computed(() => head() * 2);
      const inverse = computed(() => -head());
      const current = computed(() => {
        let result = 0;
        for (let i = 0; i < 20; i++) result += head() % 2 ? double() : inverse();
        return result;
      });
      const runs = { count: 0 };
      effect(() => {
        current();
        runs.count++;
      });
      return iterate(
        head,
        100,
        (i) => check(current() === (i % 2 ? 40 * i : -20 * i), `unstable ${i}`),
        runs,
        100,
      );
    },
  },
];

const samples = Number(samplesText);
console.log('| scenario | median ns / write | fastest ns / write |');
console.log('|---|---:|---:|');
for (const scenario of scenarios) {
  let iteration;
  const dispose = effectScope(() => {
    iteration = scenario.make();
  });
  // Warmed up first, so that the samples time optimized code.
  for (let i = 0; i < samples; i++) iteration();
  const times = [];
  for (let i = 0; i < samples; i++) {
    const start = process.hrtime.bigint();
    iteration();
    times.push(Number(process.hrtime.bigint() - start) / scenario.writes);
  }
  dispose();
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(`| ${scenario.name} | ${median.toFixed(1)} | ${times[0].toFixed(1)} |`);
}
if (sink === 0) console.log('');
