import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

/**
 * A fragile downstream: it serves at most `DOWNSTREAM_CAPACITY` requests per
 * second (default 20) and fails the rest, like an overloaded dependency.
 */
class FragileDownstream {
  private readonly capacity = Number(process.env.DOWNSTREAM_CAPACITY ?? 20);
  private second = 0;
  private served = 0;

  call(): { price: number } {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.second) [this.second, this.served] = [second, 0];
    if (++this.served > this.capacity)
      throw new ServiceUnavailableException('Downstream overloaded');
    return { price: 100 + Math.round(Math.random() * 100) / 100 };
  }
}

/**
 * An adaptive limit: declared at 50/s for everyone, it comes down towards the
 * downstream's real capacity as 503s appear, and climbs back when they stop.
 * Watch the `q` of `RateLimit-Policy` move.
 */
@Controller('quotes')
export class QuotesController {
  private readonly downstream = new FragileDownstream();

  @RateLimit({ name: 'quotes', rate: 50, burst: 50, key: 'global', adaptive: { min: 5, max: 50 } })
  @Get()
  quote() {
    return this.downstream.call();
  }
}
