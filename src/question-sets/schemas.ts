/**
 * Wire shapes of `/api/v1/question_sets` (camelCase, like the rest of `/api/v1`).
 *
 * A question set is the template a buyer answers for a product: its `definition` is the
 * `QuestionSetDefinition` (typed questions, agreements, the limits its certificates print) and
 * its `coverageUnit` says what one certificate covers: `day` (a `coverage_dates` question: one
 * certificate per calendar day) or `trip` (a `trips` question: one per trip).
 */
import { z } from 'zod';
import { pageQueryFields } from '../http/query';
import { QuestionSetDefinition } from './definition';
import { SPECIAL_EVENT_LIABILITY } from './examples';

export const CoverageUnit = z.enum(['day', 'trip']).meta({
  id: 'CoverageUnit',
  description: 'What one certificate covers: `day` (one certificate per covered calendar day) or `trip` (one per covered trip)',
});
export type CoverageUnit = z.infer<typeof CoverageUnit>;

export const CreateQuestionSetBody = z
  .strictObject({
    name: z.string().trim().min(1).max(255).meta({ description: 'Shown to you only', example: 'Special event liability (our wording)' }),
    definition: QuestionSetDefinition,
  })
  .meta({
    id: 'CreateQuestionSetRequest',
    example: { name: 'Special event liability (our wording)', definition: SPECIAL_EVENT_LIABILITY },
  });
export type CreateQuestionSetBody = z.infer<typeof CreateQuestionSetBody>;

export const ListQuestionSetsQuery = z.strictObject({
  ...pageQueryFields(20),
});
export type ListQuestionSetsQuery = z.infer<typeof ListQuestionSetsQuery>;

export const QuestionSetRead = z
  .object({
    id: z.number().int().meta({ description: 'Use as `questionSetId` of a product, or `question_set_id` of a bundle' }),
    name: z.string(),
    isShared: z.boolean().meta({ description: 'true: offered to every account by the platform; false: your account’s own' }),
    rootAccountId: z.number().int().nullable().meta({ description: 'The owning account; null for a shared set' }),
    coverageUnit: CoverageUnit,
    definition: QuestionSetDefinition,
    createdAt: z.string().meta({ description: 'ISO 8601 date-time', example: '2026-11-23T10:15:00.000Z' }),
  })
  .meta({ id: 'QuestionSet' });
export type QuestionSetRead = z.input<typeof QuestionSetRead>;
