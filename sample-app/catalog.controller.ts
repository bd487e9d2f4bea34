import { Controller, Get, Param } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

/** Public routes: limited per client IP by the module defaults, plus a stricter search limit. */
@Controller('products')
export class CatalogController {
  @Get()
  list() {
    return [
      { id: 1, name: 'Kettle' },
      { id: 2, name: 'Teapot' },
    ];
  }

  @RateLimit({ name: 'search', rate: '30/min', burst: 5 })
  @Get('search/:term')
  search(@Param('term') term: string) {
    return { term, results: [] };
  }
}
