import { Controller, Get } from '@nestjs/common';
import { RateLimit, SkipRateLimit } from 'nestjs-holdup';

/** A class-level limit ("default") that the methods inherit, replace, extend or skip. */
@RateLimit({ rate: '1/min', burst: 3 })
@Controller('classy')
export class ClassLimitedController {
  @Get('inherit')
  inherit() {
    return { ok: true };
  }

  /** Same name as the class limit ("default"): replaces it. */
  @RateLimit({ rate: '1/min', burst: 5 })
  @Get('replace')
  replace() {
    return { ok: true };
  }

  /** Another name: applies on top of the class limit. */
  @RateLimit({ name: 'extra', rate: 1, burst: 2 })
  @Get('add')
  add() {
    return { ok: true };
  }

  @SkipRateLimit()
  @Get('skip-all')
  skipAll() {
    return { ok: true };
  }

  @SkipRateLimit('default')
  @RateLimit({ name: 'extra', rate: 1, burst: 2 })
  @Get('skip-class-limit')
  skipClassLimit() {
    return { ok: true };
  }

  /** Skip everything inherited, keep its own: the nearest declaration wins. */
  @SkipRateLimit()
  @RateLimit({ name: 'own', rate: 1, burst: 2 })
  @Get('only-own')
  onlyOwn() {
    return { ok: true };
  }
}

/** `@SkipRateLimit()` on the class: nothing inherited applies; a method's explicit `@RateLimit()` does (it is nearer). */
@SkipRateLimit()
@Controller('skipped')
export class SkippedController {
  @Get()
  index() {
    return { ok: true };
  }

  @RateLimit({ name: 'own', rate: '1/min', burst: 1 })
  @Get('limited')
  limited() {
    return { ok: true };
  }
}

/** `@SkipRateLimit('cap')` on the class: the module limit "cap" is removed from every route, unless a method declares its own. */
@SkipRateLimit('cap')
@Controller('skip-one')
export class SkipOneController {
  @Get()
  index() {
    return { ok: true };
  }

  @RateLimit({ name: 'own', rate: '1/min', burst: 4 })
  @Get('own')
  own() {
    return { ok: true };
  }

  /** The method's explicit "cap" applies under the class's skip of "cap". */
  @RateLimit({ name: 'cap', rate: '1/min', burst: 1 })
  @Get('cap')
  cap() {
    return { ok: true };
  }
}

/** No class limit: module defaults apply where no method limit is declared. */
@Controller('plain')
export class PlainController {
  @Get('undecorated')
  undecorated() {
    return { ok: true };
  }

  @Get('undecorated-too')
  undecoratedToo() {
    return { ok: true };
  }

  /** Same name as the module-wide limit ("cap"): replaces it; no defaults (the route has @RateLimit). */
  @RateLimit({ name: 'cap', rate: '1/min', burst: 1 })
  @Get('cap-replaced')
  capReplaced() {
    return { ok: true };
  }

  @RateLimit({ name: 'own', rate: 1, burst: 4 })
  @Get('own')
  own() {
    return { ok: true };
  }

  @SkipRateLimit('cap')
  @Get('no-cap')
  noCap() {
    return { ok: true };
  }

  @SkipRateLimit('default')
  @Get('no-defaults')
  noDefaults() {
    return { ok: true };
  }

  @SkipRateLimit()
  @Get('nothing')
  nothing() {
    return { ok: true };
  }
}

const POOL = { name: 'pool', rate: '1/min', burst: 2 } as const;

/** Same limit name on several routes: route-scoped (default) vs `scope: 'shared'`. */
@Controller('scoped')
export class ScopedController {
  @RateLimit(POOL)
  @Get('a')
  a() {
    return { ok: true };
  }

  @RateLimit(POOL)
  @Get('b')
  b() {
    return { ok: true };
  }

  @RateLimit({ ...POOL, scope: 'shared' })
  @Get('c')
  c() {
    return { ok: true };
  }

  @RateLimit({ ...POOL, scope: 'shared' })
  @Get('d')
  d() {
    return { ok: true };
  }
}

/** A shared limit is shared across controllers too. */
@Controller('scoped-elsewhere')
export class OtherScopedController {
  @RateLimit({ ...POOL, scope: 'shared' })
  @Get()
  e() {
    return { ok: true };
  }
}

/** Two @SkipRateLimit() decorators stacked on one handler: both names are skipped. */
@RateLimit([
  { name: 'a', rate: '1/min', burst: 1 },
  { name: 'b', rate: '1/min', burst: 1 },
  { name: 'c', rate: '1/min', burst: 5 },
])
@Controller('stacked-skip')
export class StackedSkipController {
  @SkipRateLimit('a')
  @SkipRateLimit('b')
  @Get()
  index() {
    return { ok: true };
  }

  @SkipRateLimit('a', 'b')
  @Get('one-call')
  oneCall() {
    return { ok: true };
  }
}
